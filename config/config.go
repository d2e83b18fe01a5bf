package config

import (
	"strings"
	"time"
)

// Version is the only config file version this build reads.
const Version = 1

// Config is the whole configuration. Field tags are the TOML keys.
type Config struct {
	Version int    `toml:"version"`
	DataDir string `toml:"data_dir"`

	Maps    Maps             `toml:"maps"`
	Flush   Flush            `toml:"flush"`
	Watch   Watch            `toml:"watch"`
	Agents  Agents           `toml:"agents"`
	Privacy Privacy          `toml:"privacy"`
	Export  Export           `toml:"export"`
	Log     Log              `toml:"log"`
	Prices  map[string]Price `toml:"prices"`
	Sink    Sink             `toml:"sink"`

	// File is the file the config was loaded from, "" for pure defaults.
	File string `toml:"-"`
}

// Maps is how session maps are written.
type Maps struct {
	// PathMode is relative, dirs_only or hashed.
	PathMode string `toml:"path_mode"`
	// HashKeyFile holds the key of hashed mode (LoadOrCreateHashKey).
	HashKeyFile string `toml:"hash_key_file"`
	// EventCap is the most events kept in one map.
	EventCap int `toml:"event_cap"`
}

// Flush is when a session counts as finished.
type Flush struct {
	Idle Duration `toml:"idle"`
}

// Watch tunes how logs are followed.
type Watch struct {
	// MaxLine is the hard cap on one log line; longer lines are skipped and
	// counted.
	MaxLine Size `toml:"max_line"`
	// Rescan is the period of the full stat rescan behind file
	// notifications, which are only hints.
	Rescan Duration `toml:"rescan"`
	// Debounce is how long notifications are gathered before reading.
	Debounce Duration `toml:"debounce"`
	// RetireAfter is how long a session with nothing to do keeps its
	// records in a following daemon's memory; they are read back from the
	// state database on any news of it.
	RetireAfter Duration `toml:"retire_after"`
}

// Agent is one agent's switch and the directories its logs live under.
type Agent struct {
	Enabled bool     `toml:"enabled"`
	Roots   []string `toml:"roots"`
}

// CursorAgent adds the editor's own directories to Cursor's settings:
// Roots hold ~/.cursor trees (agent transcripts, cursor-agent chats),
// AppRoots the editor's User directories (globalStorage and
// workspaceStorage state.vscdb files), which are laid out differently.
type CursorAgent struct {
	Agent
	AppRoots []string `toml:"app_roots"`
}

// Agents has one entry per agent agentmap follows.
type Agents struct {
	Claude   Agent       `toml:"claude"`
	Codex    Agent       `toml:"codex"`
	Cursor   CursorAgent `toml:"cursor"`
	OpenCode Agent       `toml:"opencode"`
	Copilot  Agent       `toml:"copilot"`
	Gemini   Agent       `toml:"gemini"`
}

// AgentNames are the agents in the order of the file (and of the agent
// registry).
var AgentNames = []string{"claude", "codex", "cursor", "opencode", "copilot", "gemini"}

// ByName returns the settings of an agent by its short name.
func (a *Agents) ByName(name string) (*Agent, bool) {
	switch name {
	case "claude":
		return &a.Claude, true
	case "codex":
		return &a.Codex, true
	case "cursor":
		return &a.Cursor.Agent, true
	case "opencode":
		return &a.OpenCode, true
	case "copilot":
		return &a.Copilot, true
	case "gemini":
		return &a.Gemini, true
	}
	return nil, false
}

// Privacy keeps whole sessions out of agentmap.
type Privacy struct {
	// Exclude holds globs on a session's cwd or repo root (see Excluded).
	Exclude []string `toml:"exclude"`
}

// Export is the export schedule.
type Export struct {
	// Every is the period of scheduled exports; 0 turns them off.
	Every Duration `toml:"every"`
	// Dir receives the exports.
	Dir string `toml:"dir"`
	// Formats are written at each scheduled export.
	Formats []string `toml:"formats"`
	// Keep is how many exports of each format are retained; 0 keeps all.
	Keep int `toml:"keep"`
	// Since is incremental (sessions flushed since the previous export),
	// all, or a window such as "7d" (sessions started within it).
	Since string `toml:"since"`
}

// SinceWindow returns the window of a duration-valued Since.
func (e Export) SinceWindow() (time.Duration, bool) {
	if e.Since == SinceAll || e.Since == SinceIncremental {
		return 0, false
	}
	d, err := parseDuration(e.Since)
	return d, err == nil && d > 0
}

// Values of Export.Since besides a window.
const (
	SinceIncremental = "incremental"
	SinceAll         = "all"
)

// ExportFormats are the formats an export can be written in.
var ExportFormats = []string{"bundle", "jsonl", "attemptdb", "agentscope", "sentience"}

// Log is the daemon's own logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `toml:"level"`
}

// Price is a list price in USD per million tokens. It overrides the
// builder's embedded table for models whose name starts with the key (the
// key "unknown" prices requests whose log names no model). Load refuses a
// table that leaves out input, cache_write, cache_read or output: left out,
// they would decode as a rate of $0.
type Price struct {
	Input      float64 `toml:"input"`
	CacheWrite float64 `toml:"cache_write"`
	CacheRead  float64 `toml:"cache_read"`
	Output     float64 `toml:"output"`
	// Optional tiers (0 = none): the 1-hour cache-write price (else
	// cache_write), the fast-mode multiplier, and the long-context tier
	// (prompts above long_above tokens: long_input x the input-side
	// prices, long_output x the output price).
	CacheWrite1h float64 `toml:"cache_write_1h"`
	Fast         float64 `toml:"fast"`
	LongAbove    int64   `toml:"long_above"`
	LongInput    float64 `toml:"long_input"`
	LongOutput   float64 `toml:"long_output"`
}

// PriceFor returns the override of the longest model prefix matching model.
func (c *Config) PriceFor(model string) (Price, bool) {
	best, found := "", false
	for prefix := range c.Prices {
		if strings.HasPrefix(model, prefix) && (!found || len(prefix) > len(best)) {
			best, found = prefix, true
		}
	}
	if !found {
		return Price{}, false
	}
	return c.Prices[best], true
}

// Path modes of maps.path_mode.
var PathModes = []string{"relative", "dirs_only", "hashed"}

// LogLevels are the values of log.level.
var LogLevels = []string{"debug", "info", "warn", "error"}

// Default returns the configuration in effect when no file sets anything,
// for this machine's OS, home directory and environment.
func Default() *Config { return defaultsFor(currentPlatform()) }

// DefaultFor is Default for a given OS, home directory and environment
// (getenv may be nil: no variable set), so that a test can pin them.
func DefaultFor(goos, home string, getenv func(string) string) *Config {
	return defaultsFor(platform{goos: goos, home: home, getenv: getenv})
}

func defaultsFor(p platform) *Config {
	data := p.dataDir()
	return &Config{
		Version: Version,
		DataDir: data,
		Maps: Maps{
			PathMode:    "relative",
			HashKeyFile: p.join(data, hashKeyName),
			EventCap:    20000,
		},
		Flush: Flush{Idle: Duration{15 * time.Minute}},
		Watch: Watch{MaxLine: 64 << 20, Rescan: Duration{time.Minute}, Debounce: Duration{250 * time.Millisecond},
			RetireAfter: Duration{30 * time.Minute}},
		Agents: Agents{
			Claude:   Agent{Enabled: true, Roots: p.claudeRoots()},
			Codex:    Agent{Enabled: true, Roots: p.codexRoots()},
			Cursor:   CursorAgent{Agent: Agent{Enabled: true, Roots: p.cursorRoots()}, AppRoots: p.cursorAppRoots()},
			OpenCode: Agent{Enabled: true, Roots: p.openCodeRoots()},
			Copilot:  Agent{Enabled: true, Roots: p.copilotRoots()},
			Gemini:   Agent{Enabled: true, Roots: p.geminiRoots()},
		},
		Privacy: Privacy{Exclude: []string{}},
		Export: Export{
			Every:   Duration{0},
			Dir:     p.join(data, exportDirName),
			Formats: []string{"bundle"},
			Keep:    7,
			Since:   SinceIncremental,
		},
		Log:    Log{Level: "info"},
		Prices: map[string]Price{},
		Sink:   defaultSink(),
	}
}

// Names of the files and directories that follow data_dir unless set.
const (
	hashKeyName   = "hash.key"
	exportDirName = "exports"
)
