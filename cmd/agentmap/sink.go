package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/docs"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/state"
)

// sinkOptions turn [sink.postgres] into the sender's settings; nil when the
// team database is not configured. Settings that cannot be used are the
// sender's Unusable, which unusableSink says.
func sinkOptions(c *config.Config) *postgres.Config {
	s := c.Sink.Postgres
	if !s.Enabled() {
		return nil
	}
	url, urlErr := s.SinkURL()
	mode := s.PathMode
	if mode == "" {
		mode = c.Maps.PathMode
	}
	o := &postgres.Config{URL: url, Label: s.Device, Producer: producer(), PathMode: redact.Mode(mode),
		Every: s.Every.Duration, Batch: s.Batch}
	if w := s.URLFileWarning(); w != "" {
		o.Warnings = append(o.Warnings, w)
	}
	if o.PathMode == redact.ModeHashed {
		keyFile := s.HashKeyFile
		if keyFile == "" {
			keyFile = c.Maps.HashKeyFile
		}
		var err error
		if o.HashKey, err = config.LoadOrCreateHashKey(keyFile); err != nil {
			o.Unusable = fmt.Errorf("sink.postgres.hash_key_file: %w", err)
		}
	}
	// Settings that cannot be used stop the team database alone, never
	// the capture: a service starts without the shell's environment, so
	// the password_env that worked from a terminal is not set there.
	if urlErr != nil {
		o.Unusable = urlErr
	}
	return o
}

// unusableSink says, for a command that captures, that the team database
// gets nothing while its settings cannot be used; the capture goes on.
func unusableSink(cmd string, o *postgres.Config, stderr io.Writer) {
	if o != nil && o.Unusable != nil {
		fmt.Fprintf(stderr, "agentmap %s: warning: the team database gets nothing: %v; the maps are queued for it until the settings are fixed (%s)\n",
			cmd, o.Unusable, docs.Path(docs.TeamDatabase))
	}
}

func cmdSink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: agentmap sink status|resend|forget|migrate|grants [--json] [--config FILE | --data-dir DIR]")
		fmt.Fprintln(stderr, "  status   the team database's queue: its length, the oldest session, the last error")
		fmt.Fprintln(stderr, "  resend   queue every map of the store again (after the team database was rebuilt)")
		fmt.Fprintln(stderr, "  forget   drop the queue: what is queued now is never sent (a later change of it is)")
		fmt.Fprintln(stderr, "  migrate  create or update the team database's schema with the configured URL")
		fmt.Fprintln(stderr, "  grants   print the SQL that gives the machines' role and the reporting role their privileges,")
		fmt.Fprintln(stderr, "           for the schema's owner to run (psql -f -; rename agentmap_sink and agentmap_reader as needed)")
	}
	fl := flag.NewFlagSet("sink", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	asJSON := fl.Bool("json", false, "print the answer as JSON (status)")
	fl.Usage = func() { usage(); fl.PrintDefaults() }
	// Flags may come before the subcommand (the global ones are put
	// there) and after it.
	if err := parseFlags(fl, args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "agentmap sink: name what to do: status, resend, forget, migrate or grants (see agentmap help sink)")
		return exitUsage
	}
	sub := fl.Arg(0)
	if err := parseFlags(fl, interspersed(fl, fl.Args()[1:])); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentmap sink %s: unexpected argument %q (sink %s takes no argument; see agentmap help sink)\n", sub, fl.Arg(0), sub)
		return exitUsage
	}
	switch sub {
	case "status":
		return sinkStatus(ctx, of, *asJSON, stdout, stderr)
	case "resend", "forget":
		return sinkQueueOp(ctx, of, sub, stdout, stderr)
	case "migrate":
		return sinkMigrate(ctx, of, stdout, stderr)
	case "grants":
		// The grants file as this build carries it: a package installs
		// no docs/ folder, and the file must match the schema this build
		// migrates to. It reads no config and connects nowhere.
		io.WriteString(stdout, docs.Grants)
		return exitOK
	}
	fmt.Fprintf(stderr, "agentmap sink: unknown subcommand %q\n", sub)
	usage()
	return exitUsage
}

func sinkStatus(ctx context.Context, of opsFlags, asJSON bool, stdout, stderr io.Writer) int {
	b, code := of.open("sink status", stderr)
	if b == nil {
		return code
	}
	defer b.close()
	// A --data-dir not there is an error (open said so); the config's
	// data directory, or the default one, not there yet is a machine
	// where no daemon has run, which status says too.
	st, running, err := b.status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap sink status: %v\n", err)
		return exitFailure
	}
	if !running {
		sinkOffInConfig(st.Sink, *of.config)
	}
	// Without a queue, the config says whether a team database is set
	// up there that no daemon has started with yet (the daemon makes the
	// queue when it starts with [sink.postgres]).
	inConfig := false
	if st.Sink == nil {
		if c, _ := loadConfig(*of.config, "sink status", io.Discard); c != nil {
			inConfig = c.Sink.Postgres.Enabled()
		}
	}
	if asJSON {
		// "configured" says whether there is a sink at all: without one
		// the object holds nothing else (it was a bare null). "started"
		// says whether a daemon set up its queue; the other fields are
		// the queue's.
		started := st.Sink != nil
		out := struct {
			Configured bool  `json:"configured"`
			Started    *bool `json:"started,omitempty"`
			// Locked: another process (a scan) holds the state, so whether
			// a queue was set up is not known now.
			Locked bool `json:"locked,omitempty"`
			*daemon.SinkStatus
		}{Configured: (started && !st.Sink.Off) || inConfig, SinkStatus: st.Sink, Locked: st.Sink == nil && b.locked}
		if out.Configured && !out.Locked {
			out.Started = &started
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return exitOK
	}
	if st.Sink == nil {
		switch {
		case b.client == nil && b.db == nil && !b.locked:
			fmt.Fprintf(stdout, "team database: nothing queued (no state in %s yet: the daemon has not run there)\n", b.dataDir)
		case b.locked:
			// A scan (or a daemon this command cannot ask) holds the
			// state: its queue cannot be read now, which says nothing of
			// whether it was set up.
			fmt.Fprintf(stdout, "team database: not known now: another agentmap process (a scan) holds %s; try again when it ends\n", b.dataDir)
		case inConfig:
			fmt.Fprintln(stdout, "team database: configured, but the daemon has not started with it yet "+
				"(it sets up the queue when it starts with [sink.postgres]: agentmap restart, after a change of the config), nothing queued")
		default:
			fmt.Fprintln(stdout, "team database: not configured ([sink.postgres] in the config), nothing queued")
		}
		return exitOK
	}
	writeSinkStatus(stdout, st.Sink)
	return exitOK
}

// sinkOffInConfig marks a queue that no daemon answers for as off when the
// config file names no team database: the state keeps the queue a daemon
// set up when it had one, and "N queued" would read as on its way. A
// config that cannot be read leaves it as it is.
func sinkOffInConfig(s *daemon.SinkStatus, configFlag string) {
	if s == nil {
		return
	}
	if c, _ := loadConfig(configFlag, "status", io.Discard); c != nil && !c.Sink.Postgres.Enabled() {
		s.Off = true
	}
}

// writeSinkStatus renders the sink's part of status for people.
func writeSinkStatus(w io.Writer, s *daemon.SinkStatus) {
	if s == nil {
		return
	}
	if s.Off {
		fmt.Fprintf(w, "team db:    not configured ([sink.postgres] in the config has no url or url_file): %s queued, not sent until one is (%s sent before)\n",
			counted(s.Queue, "session"), counted(int(s.Sent), "session"))
		return
	}
	fmt.Fprintf(w, "team db:    %s sent, %d queued (device %s)\n", counted(int(s.Sent), "session"), s.Queue, s.DeviceID)
	if s.Retracted > 0 {
		fmt.Fprintf(w, "            %d removed since privacy.exclude covered them\n", s.Retracted)
	}
	if q := s.Oldest; q != nil {
		what := ""
		if q.Retract {
			what = " (to remove: privacy.exclude covers it)"
		}
		fmt.Fprintf(w, "  oldest:   %s%s, queued %s ago\n", q.Session, what, roundDuration(time.Since(q.Queued)))
	}
	if !s.LastOk.IsZero() {
		fmt.Fprintf(w, "  last ok:  %s\n", formatTime(s.LastOk))
	}
	switch {
	case s.LastError != "" && s.Failures == 0:
		fmt.Fprintf(w, "  error:    %s (maps still go; tried again at each send)\n", s.LastError)
	case s.LastError != "":
		attempts := "1 failed attempt"
		if s.Failures != 1 {
			attempts = fmt.Sprintf("%d failed attempts in a row", s.Failures)
		}
		// Only a daemon's sender tries again: after a scan, or with the
		// daemon stopped, the queue waits on disk for the next one.
		next := "retrying with back-off"
		if !s.Sending {
			next = "no daemon is sending: tried again at the next agentmap scan, or when the daemon starts"
		}
		fmt.Fprintf(w, "  error:    %s (%s; %s)\n", s.LastError, attempts, next)
	}
}

// sinkQueueOp resends or forgets, through the running daemon or, when none
// runs, on the state database directly.
func sinkQueueOp(ctx context.Context, of opsFlags, op string, stdout, stderr io.Writer) int {
	dataDir, code := of.resolve("sink "+op, stderr)
	if dataDir == "" {
		return code
	}
	var n int
	c, err := daemon.Connect(dataDir)
	switch {
	case err == nil:
		var res daemon.SinkResult
		switch {
		case op == "resend":
			var st daemon.Status
			if st, err = c.Status(ctx); err == nil && st.Sink == nil {
				err = errSinkNotSetUp
			} else if err == nil {
				res, err = c.SinkResend(ctx)
			}
		default:
			res, err = c.SinkForget(ctx)
		}
		if err == nil && res.Error != "" {
			err = errors.New(res.Error)
		}
		n = res.Sessions
	case errors.Is(err, daemon.ErrNoDaemon):
		n, err = sinkOffline(dataDir, op)
	}
	if errors.Is(err, errSinkNotSetUp) {
		err = sinkNotSetUp(*of.config)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap sink %s: %v\n", op, err)
		return exitFailure
	}
	if op == "resend" {
		fmt.Fprintf(stdout, "%s queued for the team database\n", counted(n, "session"))
	} else {
		fmt.Fprintf(stdout, "%d queued sessions dropped\n", n)
	}
	return exitOK
}

func sinkOffline(dataDir, op string) (int, error) {
	path := daemon.StatePath(dataDir)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("no state in %s yet", dataDir)
	}
	db, err := state.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if op == "resend" {
		if st, err := db.Outbox(postgres.Name).Stats(); err == nil && !st.Enabled {
			return 0, errSinkNotSetUp
		}
		return daemon.SinkResend(db)
	}
	return daemon.SinkForget(db)
}

// errSinkNotSetUp is resend's error when the state holds no queue for the
// team database: the daemon makes it when it starts with one configured.
var errSinkNotSetUp = errors.New("the team database's queue is not set up")

// errNoTeamDatabase is the error of the sink commands without a team
// database to work on, in the words of the config file and its docs.
var errNoTeamDatabase = errors.New("no team database is configured ([sink.postgres] in the config file has no url or url_file; see " + docs.Path(docs.TeamDatabase) + ")")

// sinkNotSetUp says why there is no queue to resend: no team database is
// configured, or the daemon has not started with it since it was (the
// state's own words, "the sink is not enabled", said neither).
func sinkNotSetUp(configFlag string) error {
	if c, _ := loadConfig(configFlag, "sink", io.Discard); c != nil && c.Sink.Postgres.Enabled() {
		return errors.New("the team database's queue is not set up yet: the daemon sets it up when it starts with [sink.postgres] (agentmap restart, after a change of the config)")
	}
	return errNoTeamDatabase
}

func sinkMigrate(ctx context.Context, of opsFlags, stdout, stderr io.Writer) int {
	c, code := loadConfig(*of.config, "sink migrate", stderr)
	if c == nil {
		return code
	}
	if !c.Sink.Postgres.Enabled() {
		fmt.Fprintf(stderr, "agentmap sink migrate: %v\n", errNoTeamDatabase)
		return exitFailure
	}
	url, err := c.Sink.Postgres.SinkURL()
	v := 0
	if err == nil {
		var pool *pgxpool.Pool
		if pool, err = postgres.Open(ctx, url); err == nil {
			if err = postgres.Migrate(ctx, pool); err == nil {
				v, err = postgres.Version(ctx, pool)
			}
			pool.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap sink migrate: %v\n", err)
		return exitFailure
	}
	if known := postgres.SchemaVersion(); v > known {
		// A newer agentmap migrated it, in a way this one writes into.
		fmt.Fprintf(stdout, "team database schema at version %d (this agentmap's is %d and writes into it), every table and view present\n", v, known)
		return exitOK
	}
	fmt.Fprintf(stdout, "team database schema at version %d, every table and view present\n", v)
	return exitOK
}
