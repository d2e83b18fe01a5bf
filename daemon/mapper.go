package daemon

import (
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/state"
)

// Built is a session's map, ready to store.
type Built struct {
	NativeID string
	Gzip     []byte
	Start    time.Time // zero when the map has no time
	Summary  state.Summary
}

// Mapper turns all the events of a session into its map. It must only
// read the events: they are the slices the daemon holds or has just read
// back, not copies (builder.Build only reads them). It runs on a pool, at
// the same time as the loop gathers the next chunk of a flush and writes
// and records the last one (flush.go), and reads nothing of the daemon's.
type Mapper func(events []event.Event) (Built, error)

// BuilderMapper builds with the builder's defaults (relative paths), the
// same options `agentmap build` uses by default, so that the bytes agree.
func BuilderMapper(producer string) Mapper {
	return OptionsMapper(builder.Options{PathMode: redact.ModeRelative, Producer: producer})
}

// OptionsMapper builds with the given options: the configured path mode,
// hash key, event cap and prices, as `agentmap build` would with the same.
func OptionsMapper(opt builder.Options) Mapper {
	return func(events []event.Event) (Built, error) {
		m, err := builder.Build(events, opt)
		if err != nil {
			return Built{}, err
		}
		gz, err := m.Gzip()
		if err != nil {
			return Built{}, err
		}
		b := Built{NativeID: m.NativeID(), Gzip: gz, Summary: state.Summary{
			Events: len(m.Events), Calls: m.Totals.Calls, Requests: m.Totals.Requests,
			Errors: m.Totals.Errors, Tokens: m.Totals.Tokens, CostUSD: m.Totals.CostUSD, Unpriced: m.Unpriced,
			NoUsage: m.RequestsWithoutUsage(), Outcome: m.Session.Outcome, StartedAt: m.Session.StartedAt, DurationMs: m.Session.DurationMs,
			Repos: repoNames(m.Repos),
		}}
		if t, err := time.Parse(time.RFC3339Nano, m.Session.StartedAt); err == nil {
			b.Start = t
		}
		m.Release() // only the gzip and the summary are kept
		return b, nil
	}
}

func repoNames(rs []builder.Repo) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}
