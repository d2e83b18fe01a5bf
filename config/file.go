package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DefaultFile is the fully commented default config file, the one `agentmap
// config init` writes. It is rendered from Default(), so the file and the
// defaults cannot drift apart.
func DefaultFile() []byte {
	p := currentPlatform()
	return render(defaultsFor(p), p, true)
}

// TOML renders the config as a file that Load reads back to the same
// values, without comments and with every path spelt out.
func (c *Config) TOML() []byte { return render(c, currentPlatform(), false) }

// writer writes TOML with optional comments.
type writer struct {
	b        strings.Builder
	comments bool
	path     func(string) string
}

func (w *writer) comment(lines ...string) {
	if !w.comments {
		return
	}
	for _, l := range lines {
		if l == "" {
			w.b.WriteString("#\n")
			continue
		}
		w.b.WriteString("# " + l + "\n")
	}
}

func (w *writer) blank() { w.b.WriteString("\n") }

func (w *writer) table(name string) { w.b.WriteString("[" + name + "]\n") }

func (w *writer) kv(key, value string) { w.b.WriteString(key + " = " + value + "\n") }

// derived writes a key whose default follows something else (data_dir, or
// for data_dir the platform's data directory): commented out in the default
// file, so that its default keeps following.
func (w *writer) derived(key, value string) {
	if w.comments {
		w.b.WriteString("# ")
	}
	w.kv(key, value)
}

func render(c *Config, p platform, comments bool) []byte {
	w := &writer{comments: comments, path: func(s string) string { return s }}
	if comments {
		w.path = p.tilde
	}
	str := func(s string) string { return quote(s) }
	pathStr := func(s string) string { return quote(w.path(s)) }

	w.comment(
		"agentmap configuration.",
		"",
		"Every key is optional: a key left out keeps the default shown here.",
		`Durations are strings such as "90s", "15m", "24h" or "7d"; sizes such as "64MiB".`,
		`Paths may start with "~/" (your home directory).`,
		"The running daemon reloads this file on SIGHUP and when it changes;",
		"a file with errors is reported and the previous settings are kept.",
		"`agentmap config check` validates it, `agentmap config show` prints what is in effect.",
	)
	if comments {
		w.blank()
	}
	w.comment("The format of this file.")
	w.kv("version", strconv.Itoa(c.Version))
	w.blank()
	w.comment("Where maps, the state database, logs and exports are kept. The default",
		"follows the platform's data directory ($XDG_DATA_HOME on Linux) at each start;",
		"setting the key pins it.")
	w.derived("data_dir", pathStr(c.DataDir))
	w.blank()

	w.table("maps")
	w.comment(
		"How paths appear in maps:",
		"  relative   paths relative to their git repository",
		"  dirs_only  directories kept, file names replaced by a short hash",
		"  hashed     every path segment replaced by an HMAC with the key below",
	)
	w.kv("path_mode", str(c.Maps.PathMode))
	w.comment(
		"The key of hashed mode: 32 random bytes, created with mode 0600 on first use.",
		"Defaults to hash.key in data_dir.",
	)
	w.derived("hash_key_file", pathStr(c.Maps.HashKeyFile))
	w.comment("The most events kept in one map; a longer session is marked truncated,",
		"its totals still count everything.")
	w.kv("event_cap", strconv.Itoa(c.Maps.EventCap))
	w.blank()

	w.table("flush")
	w.comment("A session is finished, and its map written, after this long without activity.")
	w.kv("idle", str(c.Flush.Idle.String()))
	w.blank()

	w.table("watch")
	w.comment("Log lines longer than this are skipped and counted instead of read.")
	w.kv("max_line", str(c.Watch.MaxLine.String()))
	w.comment("File notifications are hints; a rescan (file sizes and times only) this often is the truth.")
	w.kv("rescan", str(c.Watch.Rescan.String()))
	w.comment("How long notifications are gathered before the logs are read.")
	w.kv("debounce", str(c.Watch.Debounce.String()))
	w.comment("A session quiet this long leaves the daemon's memory; its records stay in the state")
	w.comment("database and are read back on any news of it.")
	w.kv("retire_after", str(c.Watch.RetireAfter.String()))
	w.blank()

	agentDoc := map[string][]string{
		"claude":   {"Claude Code: transcripts under <root>/projects. Defaults: $CLAUDE_CONFIG_DIR", "(comma-separated), ~/.claude and ~/.config/claude."},
		"codex":    {"Codex CLI: rollouts under <root>/sessions and <root>/archived_sessions.", "Defaults: $CODEX_HOME and ~/.codex."},
		"cursor":   {"Cursor: roots hold agent transcripts and cursor-agent chats (~/.cursor);", "app_roots hold the editor's User directory (its state.vscdb files)."},
		"opencode": {"OpenCode: its data directory holding opencode.db (read-only).", "Default: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode (and the directory of $OPENCODE_DB)."},
		"copilot":  {"GitHub Copilot CLI: session-state/<id>/events.jsonl under <root>.", "Defaults: $COPILOT_HOME and ~/.copilot."},
		"gemini":   {"Gemini CLI: chats under <root>/tmp/<project>/chats.", "Defaults: $GEMINI_CLI_HOME/.gemini and ~/.gemini."},
	}
	for _, name := range AgentNames {
		a, _ := c.Agents.ByName(name)
		w.table("agents." + name)
		w.comment(agentDoc[name]...)
		w.comment("Roots that do not exist yet are picked up when they appear. The roots shown",
			"are the defaults found now; left commented out, they follow the environment.")
		w.kv("enabled", strconv.FormatBool(a.Enabled))
		roots := make([]string, len(a.Roots))
		for i, r := range a.Roots {
			roots[i] = w.path(r)
		}
		w.derived("roots", strList(roots))
		if name == "cursor" {
			app := make([]string, len(c.Agents.Cursor.AppRoots))
			for i, r := range c.Agents.Cursor.AppRoots {
				app[i] = w.path(r)
			}
			w.derived("app_roots", strList(app))
		}
		w.blank()
	}

	w.table("privacy")
	w.comment(
		"Sessions whose working directory or repository matches one of these globs are",
		"never read beyond what identifies them, and never mapped. A pattern matches a",
		`directory or anything below it; "*" stays within a path segment, "**" spans`,
		`any number of them; a pattern without "/" matches a directory name anywhere.`,
		`Example: exclude = ["~/clients/**", "secret-*"]`,
	)
	w.kv("exclude", strList(c.Privacy.Exclude))
	w.blank()

	w.table("export")
	w.comment(`How often the store is exported on a schedule; "0s" turns scheduled exports off.`)
	w.kv("every", str(c.Export.Every.String()))
	w.comment("Where scheduled exports are written. Defaults to exports in data_dir.")
	w.derived("dir", pathStr(c.Export.Dir))
	w.comment("Formats written at each export: " + strings.Join(ExportFormats, ", ") + ".")
	w.kv("formats", strList(c.Export.Formats))
	w.comment("How many exports of each format are kept; 0 keeps all.")
	w.kv("keep", strconv.Itoa(c.Export.Keep))
	w.comment(
		`Which sessions an export holds: "incremental" (those flushed since the previous`,
		`export), "all", or a window such as "7d" (those started within it).`,
	)
	w.kv("since", str(c.Export.Since))
	w.blank()

	w.table("log")
	w.comment("The daemon's own log level: debug, info, warn or error.")
	w.kv("level", str(c.Log.Level))

	models := make([]string, 0, len(c.Prices))
	for m := range c.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	if comments || len(models) > 0 {
		w.blank()
	}
	// The example names one model exactly and repeats its built-in row, so
	// that uncommenting it changes no price (a family prefix such as
	// "claude-opus-4" would reprice every model under it).
	w.comment(
		"Price overrides, in USD per million tokens, for models whose name starts with",
		"the table's name (the longest prefix wins); [prices.\"unknown\"] prices requests",
		"whose log names no model. Models not listed use agentmap's built-in list prices",
		"(`agentmap prices` prints them); a model in neither is unpriced: its tokens",
		"count, its cost shows as unpriced. input, cache_write, cache_read and output are",
		"required (0 where free). Optional keys: cache_write_1h, fast (a multiplier),",
		"long_above with long_input and long_output.",
		"Example, for Xiaomi MiMo V2.5 Pro, billed in CNY (the built-in row converts at",
		"CNY 6.9 per USD; write what you pay):",
		`[prices."mimo-v2.5-pro"]`,
		"input = 0.435",
		"cache_write = 0.435",
		"cache_read = 0.00362",
		"output = 0.87",
	)
	for i, m := range models {
		if i > 0 {
			w.blank()
		}
		pr := c.Prices[m]
		w.table("prices." + quote(m))
		w.kv("input", float(pr.Input))
		w.kv("cache_write", float(pr.CacheWrite))
		w.kv("cache_read", float(pr.CacheRead))
		w.kv("output", float(pr.Output))
		for _, o := range []struct {
			key string
			v   float64
		}{{"cache_write_1h", pr.CacheWrite1h}, {"fast", pr.Fast}, {"long_above", float64(pr.LongAbove)},
			{"long_input", pr.LongInput}, {"long_output", pr.LongOutput}} {
			if o.v != 0 {
				if o.key == "long_above" {
					w.kv(o.key, strconv.FormatInt(pr.LongAbove, 10))
				} else {
					w.kv(o.key, float(o.v))
				}
			}
		}
	}
	renderSink(w, c, str, pathStr)
	return []byte(w.b.String())
}

// quote writes a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func strList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func float(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}
