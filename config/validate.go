package config

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentmap/agentmap/state/datadir"
)

// Problem is one thing wrong with a config. Line is 0 when the value did not
// come from a file (a default, or a key the file does not set).
type Problem struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (p *Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems lists the problems inside an error returned by Load or Validate.
func Problems(err error) []*Problem {
	var out []*Problem
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if p, ok := e.(*Problem); ok {
			out = append(out, p)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if u := errors.Unwrap(e); u != nil {
			walk(u)
		}
	}
	walk(err)
	return out
}

// Limits of the values the daemon can work with; outside them a value is
// almost certainly a typo.
const (
	minIdle     = 10 * time.Second
	maxIdle     = 7 * 24 * time.Hour
	minMaxLine  = 1 << 20
	maxMaxLine  = 1 << 30 // watchers.MaxMaxLine
	MaxEventCap = 1_000_000
	minEvery    = time.Minute
	maxPrice    = 100_000
	minRescan   = time.Second
	maxRescan   = 24 * time.Hour
	maxDebounce = 10 * time.Second
)

// The bounds of watch.retire_after (and of run's --retire-after).
const (
	MinRetireAfter = time.Minute
	MaxRetireAfter = 30 * 24 * time.Hour
)

// Validate checks every value and returns all problems, joined.
func (c *Config) Validate() error { return c.validate(currentPlatform()) }

func (c *Config) validate(p platform) error {
	var probs []error
	add := func(key, format string, args ...any) {
		probs = append(probs, &Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	absPath := func(key, path string) {
		switch {
		case path == "":
			add(key, "must not be empty")
		case !p.isAbs(path):
			add(key, "must be an absolute path or start with ~/%s", noTilde(p))
		}
	}

	if c.Version != Version {
		add("version", "unsupported version %d (this build reads version %d)", c.Version, Version)
	}
	// With no home directory ($HOME unset), the defaults put under it are
	// relative paths (.claude for ~/.claude): not the file's doing, and
	// left out by the command line (its homeless), which then asks for
	// --data-dir. Only what the file itself sets is checked then.
	var homeless *Config
	if p.home == "" {
		homeless = defaultsFor(p)
	}
	fromHomelessDefault := func(path, def string) bool {
		return homeless != nil && path == def && !p.isAbs(path)
	}
	if !fromHomelessDefault(c.DataDir, homeless.dataDirOrEmpty()) {
		absPath("data_dir", c.DataDir)
	}
	if p.goos == runtime.GOOS && p.isAbs(c.DataDir) {
		// What `uninstall --purge` would remove must be agentmap's alone.
		cfg, _ := Path("") // the usual config file
		if why := datadir.Unsafe(c.DataDir, p.home, cfg); why != "" {
			add("data_dir", "%s cannot be the data directory: %s", c.DataDir, why)
		}
	}
	// A path derived from a bad data_dir is reported once, as data_dir.
	dataDirBad := !p.isAbs(c.DataDir)
	derivedPath := func(key, path string) {
		if dataDirBad && strings.HasPrefix(path, c.DataDir) {
			return
		}
		absPath(key, path)
	}

	if !slices.Contains(PathModes, c.Maps.PathMode) {
		add("maps.path_mode", "%q is not one of %s", c.Maps.PathMode, strings.Join(PathModes, ", "))
	}
	derivedPath("maps.hash_key_file", c.Maps.HashKeyFile)
	if c.Maps.EventCap < 1 || c.Maps.EventCap > MaxEventCap {
		add("maps.event_cap", "must be between 1 and %d", MaxEventCap)
	}

	if d := c.Flush.Idle.Duration; d < minIdle || d > maxIdle {
		add("flush.idle", "must be between %s and %s", formatDuration(minIdle), formatDuration(maxIdle))
	}
	if s := c.Watch.MaxLine; s < minMaxLine || s > maxMaxLine {
		add("watch.max_line", "must be between %s and %s", Size(minMaxLine), Size(maxMaxLine))
	}

	if d := c.Watch.Rescan.Duration; d < minRescan || d > maxRescan {
		add("watch.rescan", "must be between %s and %s", formatDuration(minRescan), formatDuration(maxRescan))
	}
	if d := c.Watch.Debounce.Duration; d < 0 || d > maxDebounce {
		add("watch.debounce", "must be between 0 and %s", formatDuration(maxDebounce))
	}
	if d := c.Watch.RetireAfter.Duration; d < MinRetireAfter || d > MaxRetireAfter {
		add("watch.retire_after", "must be between %s and %s", formatDuration(MinRetireAfter), formatDuration(MaxRetireAfter))
	}

	roots := func(key string, list, defaults []string) {
		for i, r := range list {
			switch {
			case homeless != nil && !p.isAbs(r) && slices.Contains(defaults, r):
				// a default under the missing home: left out
			case r == "":
				add(key, "entry %d is empty", i+1)
			case !p.isAbs(r):
				add(key, "entry %d must be an absolute path or start with ~/%s", i+1, noTilde(p))
			}
		}
	}
	for _, name := range AgentNames {
		a, _ := c.Agents.ByName(name)
		n := len(a.Roots)
		if name == "cursor" {
			n += len(c.Agents.Cursor.AppRoots)
		}
		if a.Enabled && n == 0 {
			add("agents."+name+".roots", "an enabled agent needs at least one root")
		}
		var defaults []string
		if homeless != nil {
			d, _ := homeless.Agents.ByName(name)
			defaults = d.Roots
		}
		roots("agents."+name+".roots", a.Roots, defaults)
	}
	var appDefaults []string
	if homeless != nil {
		appDefaults = homeless.Agents.Cursor.AppRoots
	}
	roots("agents.cursor.app_roots", c.Agents.Cursor.AppRoots, appDefaults)

	for i, pat := range c.Privacy.Exclude {
		if err := checkPattern(p, pat); err != nil {
			add("privacy.exclude", "entry %d: %v", i+1, err)
		}
	}

	if d := c.Export.Every.Duration; d != 0 && d < minEvery {
		add("export.every", "must be 0 (off) or at least %s", formatDuration(minEvery))
	}
	derivedPath("export.dir", c.Export.Dir)
	seen := map[string]bool{}
	for _, f := range c.Export.Formats {
		switch {
		case !slices.Contains(ExportFormats, f):
			add("export.formats", "%q is not one of %s", f, strings.Join(ExportFormats, ", "))
		case seen[f]:
			add("export.formats", "%q is listed twice", f)
		}
		seen[f] = true
	}
	if c.Export.Every.Duration > 0 && len(c.Export.Formats) == 0 {
		add("export.formats", "scheduled exports (export.every) need at least one format")
	}
	if c.Export.Keep < 0 {
		add("export.keep", "must be 0 (keep all) or more")
	}
	if s := c.Export.Since; s != SinceIncremental && s != SinceAll {
		if d, err := parseDuration(s); err != nil || d <= 0 {
			add("export.since", "%q is not incremental, all or a window such as 7d", s)
		}
	}

	if !slices.Contains(LogLevels, c.Log.Level) {
		add("log.level", "%q is not one of %s", c.Log.Level, strings.Join(LogLevels, ", "))
	}

	models := make([]string, 0, len(c.Prices))
	for m := range c.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		if strings.TrimSpace(m) == "" {
			add(toml.Key{"prices", m}.String(), "a model prefix must not be empty")
			continue
		}
		pr := c.Prices[m]
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", pr.Input}, {"cache_write", pr.CacheWrite}, {"cache_read", pr.CacheRead}, {"output", pr.Output},
			{"cache_write_1h", pr.CacheWrite1h}, {"fast", pr.Fast}, {"long_input", pr.LongInput}, {"long_output", pr.LongOutput}} {
			if math.IsNaN(f.v) || f.v < 0 || f.v > maxPrice {
				add(toml.Key{"prices", m, f.name}.String(), "must be between 0 and %d USD per million tokens", maxPrice)
			}
		}
		if pr.LongAbove < 0 {
			add(toml.Key{"prices", m, "long_above"}.String(), "must be a token count of 0 or more")
		}
	}
	c.validateSink(p, add)
	return errors.Join(probs...)
}

// dataDirOrEmpty is c's data directory, or "" for no config.
func (c *Config) dataDirOrEmpty() string {
	if c == nil {
		return ""
	}
	return c.DataDir
}

// noTilde is what a "start with ~/" adds when there is no home for ~ to
// stand for: a path written ~/x reads as the relative x then.
func noTilde(p platform) string {
	if p.home != "" {
		return ""
	}
	if p.goos == "windows" {
		return " (but %USERPROFILE% is not set, so ~ stands for nothing)"
	}
	return " (but HOME is not set, so ~ stands for nothing)"
}
