package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/sink/postgres"
)

// teamFlags choose the team database as the source of report and usage.
type teamFlags struct {
	from   *string
	device *string
}

func addTeamFlags(fl *flag.FlagSet) teamFlags {
	return teamFlags{
		from:   fl.String("from", "", "read the team database instead of the local store: a postgres:// URL, or \"team\" for [sink.postgres] of the config"),
		device: fl.String("device", "", "with --from: only sessions of these devices (labels or ids, comma-separated)"),
	}
}

func (t teamFlags) set() bool { return *t.from != "" || *t.device != "" }

// source opens the team database the flags name.
func (t teamFlags) source(cmd string, f mapFlags, stderr io.Writer) (report.Source, string, int) {
	if *t.from == "" {
		fmt.Fprintf(stderr, "agentmap %s: --device needs --from\n", cmd)
		return nil, "", exitUsage
	}
	if *f.maps != "" {
		fmt.Fprintf(stderr, "agentmap %s: --from and --maps are two sources; give one\n", cmd)
		return nil, "", exitUsage
	}
	url := *t.from
	if url == "team" {
		c, code := loadConfig(*f.ops.config, cmd, stderr)
		if c == nil {
			return nil, "", code
		}
		var err error
		if url, err = teamURL(c); err != nil {
			fmt.Fprintf(stderr, "agentmap %s: --from team: %v\n", cmd, err)
			return nil, "", exitFailure
		}
	}
	src := teamSource{url: url}
	for _, d := range strings.Split(*t.device, ",") {
		if d = strings.TrimSpace(d); d != "" {
			src.devices = append(src.devices, d)
		}
	}
	// Where the maps come from, for the report's scope line (a report is
	// made to be shared): the database, host, port and user, never the
	// password or the rest of the string.
	where := "the team database"
	if target := config.ConnTarget(url); target != "" {
		where += " " + target
	}
	if len(src.devices) > 0 {
		where += " (devices " + strings.Join(src.devices, ", ") + ")"
	}
	return src, where, exitOK
}

// sourceError is a source that cannot be read as a whole (the team
// database refused the connection or the query, or went away while it was
// read), not one unreadable map: what was read is not what was asked for,
// so a report or a usage table made of it would be wrong, and none is
// written (collectMaps).
type sourceError struct{ err error }

func (e sourceError) Error() string {
	if errors.As(e.err, new(*postgres.UnknownDevicesError)) {
		// Read, and found no such device: --device names one it has not.
		return "--device: " + e.err.Error()
	}
	return "cannot read the team database: " + strings.TrimPrefix(e.err.Error(), "read the team database: ")
}
func (e sourceError) Unwrap() error { return e.err }

func teamURL(c *config.Config) (string, error) {
	if !c.Sink.Postgres.Enabled() {
		return "", errNoTeamDatabase
	}
	return c.Sink.Postgres.SinkURL()
}

// teamSource reads the maps of the team database. The filter is applied
// in the database where it can be (agent, start window, plain repo names)
// and again on every map, so that globs and session prefixes mean what
// they mean on the local store.
type teamSource struct {
	url     string
	devices []string
	// activeSince keeps the sessions that went on until it or later
	// (usage: a session started before --since may hold requests after).
	activeSince time.Time
}

// Maps implements report.Source.
func (s teamSource) Maps(ctx context.Context, f report.Filter) iter.Seq2[*report.Map, error] {
	return func(yield func(*report.Map, error) bool) {
		pf := postgres.Filter{Devices: s.devices, Since: f.Since, Until: f.Until, ActiveSince: s.activeSince}
		if f.Agent != "" {
			pf.Agents = []string{strings.ToLower(f.Agent)}
		}
		if f.Repo != "" && !strings.ContainsAny(f.Repo, `*?[\`) {
			pf.Repos = []string{f.Repo}
		}
		stop := errors.New("stopped")
		err := postgres.Read(ctx, s.url, pf, func(st postgres.Stored) error {
			m, err := report.Decode(bytes.NewReader(st.Map))
			if err != nil {
				if !yield(nil, fmt.Errorf("team database, device %s: %w", st.DeviceID, err)) {
					return stop
				}
				return nil
			}
			if !f.Keep(m) {
				return nil
			}
			if !yield(m, nil) {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			yield(nil, sourceError{err})
		}
	}
}
