// Package daemon wires the watchers, the state database, the builder and
// the map store into the long-running follower behind `agentmap run`.
package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// Defaults.
const (
	DefaultIdle     = 15 * time.Minute
	DefaultDebounce = 250 * time.Millisecond
	DefaultRescan   = time.Minute
	// maxBackoff caps the wait between attempts to write a map.
	maxBackoff = 5 * time.Minute
	// batchEvents and batchBytes bound one committed batch, so a long
	// catch-up holds little in memory and a crash repeats little work.
	batchEvents = 5000
	batchBytes  = 16 << 20
)

// Options configure a Daemon. The zero value of every field but DataDir
// takes its default.
type Options struct {
	// DataDir holds state.db and maps/.
	DataDir string
	// Idle is how long a session must be quiet before its map is written.
	Idle time.Duration
	// TurnEndQuiet is the shorter quiet that suffices after a turn end
	// (the agent waits for its user): Idle/3 when zero.
	TurnEndQuiet time.Duration
	// Roots are the directory trees to follow.
	Roots []watchers.Root
	// MaxLine is the hard cap on one log line (watchers.DefaultMaxLine).
	MaxLine int
	// ParseWorkers is how many workers parse new logs ahead of the loop
	// (parse.go): GOMAXPROCS when zero, none when 1.
	ParseWorkers int
	Logger       *slog.Logger
	Clock        watchers.Clock
	// Once catches up on everything present, writes every map and returns.
	Once bool
	// Debounce, Rescan and MaxWatches tune the watcher.
	Debounce   time.Duration
	Rescan     time.Duration
	MaxWatches int
	// Agents is the registry (agents.All).
	Agents []agents.Agent
	// Mapper builds a session's map (the builder with the default options).
	Mapper Mapper
	// MapIdentity names the options Mapper builds with
	// (builder.Options.Identity); "" when not known, and no map is written
	// again for a change of it (identity.go).
	MapIdentity string
	// Producer is session.cliVersion of the maps.
	Producer string
	// Progress, if set, is told how a catch-up advances: bytes read so far
	// and in all, sessions seen.
	Progress func(done, total int64, sessions int)
	// Rewriting, if set, is told when every map is to be written again,
	// as they were written by an earlier builder or with other map
	// options (identity.go), and how many sessions it goes through (some
	// make no map, or one written with these options already).
	Rewriting func(sessions int)
	// RewriteLeft, if set, is told how many sessions such a rewrite has
	// left after each of a one-shot catch-up's steps through them.
	RewriteLeft func(left int)
	// NoAutoRewrite leaves such maps to the next daemon or scan: for a
	// daemon that stops once its own work is done (flush in the process
	// of the command), which for --rewrite writes them all itself and
	// says so.
	NoAutoRewrite bool
	// Export schedules exports of the map store (export.go).
	Export ExportOptions
	// Sink, if set, sends the maps to the team database (sink.go).
	Sink *postgres.Config
	// Exclude, if set, keeps out every session whose working directory it
	// matches (privacy.exclude): see exclude.go.
	Exclude func(dir string) bool
	// ExcludeKey identifies Exclude's patterns, "" for none: a hash of
	// them, never their text (config.ExcludeKey). The state database keeps
	// (a salted hash of) the key of the patterns its records agree with; a
	// start with another key applies Exclude to the sessions already kept
	// (excludeChanged). Set it with Exclude: without it, a start does not
	// look at what is kept.
	ExcludeKey string
	// Control serves the control API on ControlPath(DataDir) while the
	// daemon follows (not with Once).
	Control bool
	// RetireAfter is how long a following daemon keeps the records of a
	// session with nothing to do in memory (retireidle.go):
	// DefaultRetireAfter when zero, for ever when negative.
	RetireAfter time.Duration
}

func (o *Options) fill() {
	if o.RetireAfter == 0 {
		o.RetireAfter = retireAfterDefault
	}
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.TurnEndQuiet <= 0 {
		o.TurnEndQuiet = o.Idle / 3
	}
	o.MaxLine = watchers.LineCap(o.MaxLine) // the readers' cap, which status reports
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = watchers.SystemClock{}
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Rescan <= 0 {
		o.Rescan = DefaultRescan
	}
	if o.Agents == nil {
		o.Agents = agents.All
	}
	if o.Mapper == nil {
		o.Mapper = BuilderMapper(o.Producer)
	}
}

// StatePath is the state database inside a data dir.
func StatePath(dataDir string) string { return filepath.Join(dataDir, "state.db") }

// ControlPath is the control socket of a data dir: <data dir>/agentmap.sock,
// or, when that path is too long for a unix socket (a data directory deep
// in a tree), <shortSocketDir>/<hash>.sock, named by a hash of the data
// directory's absolute path so that the daemon and every command find the
// same socket without reading anything. A socket path is bounded by
// sun_path: 104 bytes on macOS and the BSDs, 108 on Linux, its NUL
// included; past it the daemon could not serve its socket and every
// command that asks it would fail.
func ControlPath(dataDir string) string {
	p := filepath.Join(dataDir, "agentmap.sock")
	if shortSocketDir == "" {
		return p
	}
	// Decided on the directory itself, not its spelling: a daemon given
	// the absolute path and a command given "." (or a link to it) must
	// find the same socket.
	real := dataDir
	if abs, err := filepath.Abs(dataDir); err == nil {
		real = abs
	}
	if r, err := filepath.EvalSymlinks(real); err == nil {
		real = r
	}
	if q := filepath.Join(real, "agentmap.sock"); len(q) > maxSocketPath {
		sum := sha256.Sum256([]byte(filepath.Clean(real)))
		return filepath.Join(shortSocketDir, hex.EncodeToString(sum[:8])+".sock")
	}
	if len(p) > maxSocketPath {
		return filepath.Join(real, "agentmap.sock") // a long spelling of a short path
	}
	return p
}

// maxSocketPath is the longest socket path every system takes.
const maxSocketPath = 103

// MapsDir is the map store inside a data dir.
func MapsDir(dataDir string) string { return filepath.Join(dataDir, "maps") }
