package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvConfig names the environment variable that points at the config file.
const EnvConfig = "AGENTMAP_CONFIG"

// Path returns the config file to use: flagValue (--config) if set, else
// $AGENTMAP_CONFIG, else os.UserConfigDir()/agentmap/config.toml.
func Path(flagValue string) (string, error) {
	p := currentPlatform()
	if flagValue != "" {
		return p.abs(flagValue)
	}
	if env := os.Getenv(EnvConfig); env != "" {
		return p.abs(env)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", errors.New("no config directory for this user (set " + EnvConfig + " or pass --config)")
	}
	return filepath.Join(dir, "agentmap", "config.toml"), nil
}

// platform is what the defaults depend on, so that every OS's defaults can
// be checked on any OS.
type platform struct {
	goos   string
	home   string
	getenv func(string) string
}

func currentPlatform() platform {
	home, _ := os.UserHomeDir()
	return platform{goos: runtime.GOOS, home: home, getenv: os.Getenv}
}

func (p platform) sep() string {
	if p.goos == "windows" {
		return `\`
	}
	return "/"
}

// join joins with the platform's separator, not the build's, so that the
// Windows defaults can be tested on Linux.
func (p platform) join(parts ...string) string {
	if p.goos != "windows" {
		return filepath.Join(parts...)
	}
	out := strings.TrimRight(parts[0], `\/`)
	for _, s := range parts[1:] {
		out += `\` + strings.Trim(s, `\/`)
	}
	return out
}

func (p platform) isAbs(path string) bool {
	if p.goos != "windows" {
		return strings.HasPrefix(path, "/")
	}
	// C:\x, C:/x or a UNC path.
	if len(path) >= 3 && path[1] == ':' && (path[2] == '\\' || path[2] == '/') {
		return true
	}
	return strings.HasPrefix(path, `\\`)
}

// expand replaces a leading "~" with the home directory.
func (p platform) expand(path string) string {
	if path == "~" {
		return p.home
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return p.join(p.home, rest)
	}
	if p.goos == "windows" {
		if rest, ok := strings.CutPrefix(path, `~\`); ok {
			return p.join(p.home, rest)
		}
	}
	return path
}

// abs expands "~" and makes a path absolute against the working directory
// (for paths given on the command line or in the environment).
func (p platform) abs(path string) (string, error) {
	path = p.expand(path)
	if p.isAbs(path) {
		return path, nil
	}
	return filepath.Abs(path)
}

// tilde is the reverse of expand, for the default file: "~/.claude" reads
// better than a home directory spelt out.
func (p platform) tilde(path string) string {
	if p.home == "" || p.goos == "windows" {
		return path
	}
	if path == p.home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(path, p.home+"/"); ok {
		return "~/" + rest
	}
	return path
}

// ServiceEnv names the environment variables that move what agentmap
// follows (an agent's root) or where it keeps its files (XDG_DATA_HOME:
// the data directory; XDG_CONFIG_HOME: the config file and Claude Code's
// older root). A per-user service starts without the environment of the
// shell that installed it: `agentmap install` carries those set there into
// the service, and `doctor` says when they differ. (LOCALAPPDATA and
// APPDATA, read on Windows, where there is no service, are not among them.)
var ServiceEnv = []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "XDG_CONFIG_HOME", "XDG_DATA_HOME"}

func (p platform) env(name string) string {
	if p.getenv == nil {
		return ""
	}
	return strings.TrimSpace(p.getenv(name))
}

func (p platform) dataDir() string {
	switch p.goos {
	case "darwin":
		return p.join(p.home, "Library", "Application Support", "agentmap")
	case "windows":
		if d := p.env("LOCALAPPDATA"); d != "" && p.isAbs(d) {
			return p.join(d, "agentmap")
		}
		return p.join(p.home, "AppData", "Local", "agentmap")
	}
	if d := p.env("XDG_DATA_HOME"); d != "" && p.isAbs(d) {
		return p.join(d, "agentmap")
	}
	return p.join(p.home, ".local", "share", "agentmap")
}

// xdgConfig is $XDG_CONFIG_HOME, or ~/.config.
func (p platform) xdgConfig() string {
	if d := p.env("XDG_CONFIG_HOME"); d != "" && p.isAbs(d) {
		return d
	}
	return p.join(p.home, ".config")
}

// claudeRoots: $CLAUDE_CONFIG_DIR (a comma-separated list), ~/.claude and
// $XDG_CONFIG_HOME/claude (older builds; ~/.config/claude).
func (p platform) claudeRoots() []string {
	var roots []string
	for _, d := range strings.Split(p.env("CLAUDE_CONFIG_DIR"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			roots = append(roots, p.expand(d))
		}
	}
	roots = append(roots, p.join(p.home, ".claude"), p.join(p.xdgConfig(), "claude"))
	return dedupe(roots)
}

// codexRoots: $CODEX_HOME and ~/.codex (archived_sessions/ is under it).
func (p platform) codexRoots() []string {
	var roots []string
	if d := p.env("CODEX_HOME"); d != "" {
		roots = append(roots, p.expand(d))
	}
	return dedupe(append(roots, p.join(p.home, ".codex")))
}

// cursorRoots: ~/.cursor (agent transcripts, cursor-agent chats).
func (p platform) cursorRoots() []string { return []string{p.join(p.home, ".cursor")} }

// openCodeRoots: OpenCode's data directory, $XDG_DATA_HOME/opencode, else
// ~/.local/share/opencode (OpenCode resolves it so on every OS), and the
// directory of $OPENCODE_DB when that moves the store elsewhere.
func (p platform) openCodeRoots() []string {
	data := p.join(p.home, ".local", "share", "opencode")
	if d := p.env("XDG_DATA_HOME"); d != "" && p.isAbs(d) {
		data = p.join(d, "opencode")
	}
	roots := []string{data}
	if dir := p.openCodeDBDir(data); dir != "" {
		roots = append(roots, dir)
	}
	return dedupe(roots)
}

// openCodeDBDir is the directory of the store $OPENCODE_DB names (absolute,
// or relative to the data directory, as OpenCode reads it), when the file
// keeps a store's name (opencode.db, opencode-<channel>.db): a root holds
// only files of those names. Another name, or ":memory:", gives "" (doctor
// says why).
func (p platform) openCodeDBDir(data string) string {
	db := p.env("OPENCODE_DB")
	if db == "" || db == ":memory:" {
		return ""
	}
	if !p.isAbs(db) {
		db = p.join(data, db)
	}
	seps := "/"
	if p.goos == "windows" {
		seps = `/\`
	}
	i := strings.LastIndexAny(db, seps)
	if i <= 0 || !OpenCodeStoreName(db[i+1:]) {
		return ""
	}
	return db[:i]
}

// OpenCodeStoreName reports whether a file name is one OpenCode gives its
// store: opencode.db, or opencode-<channel>.db for another release channel.
func OpenCodeStoreName(name string) bool {
	return name == "opencode.db" || strings.HasPrefix(name, "opencode-") && strings.HasSuffix(name, ".db")
}

// copilotRoots: $COPILOT_HOME and ~/.copilot.
func (p platform) copilotRoots() []string {
	var roots []string
	if d := p.env("COPILOT_HOME"); d != "" {
		roots = append(roots, p.expand(d))
	}
	return dedupe(append(roots, p.join(p.home, ".copilot")))
}

// cursorAppRoots: the editor's User directory (state.vscdb files) of the OS.
func (p platform) cursorAppRoots() []string {
	switch p.goos {
	case "darwin":
		return []string{p.join(p.home, "Library", "Application Support", "Cursor", "User")}
	case "windows":
		if d := p.env("APPDATA"); d != "" && p.isAbs(d) {
			return []string{p.join(d, "Cursor", "User")}
		}
		return []string{p.join(p.home, "AppData", "Roaming", "Cursor", "User")}
	}
	return []string{p.join(p.xdgConfig(), "Cursor", "User")}
}

// geminiRoots: $GEMINI_CLI_HOME/.gemini (the client's home override) and
// ~/.gemini; chats are under tmp/<project>/chats.
func (p platform) geminiRoots() []string {
	var roots []string
	if d := p.env("GEMINI_CLI_HOME"); d != "" {
		roots = append(roots, p.join(p.expand(d), ".gemini"))
	}
	return dedupe(append(roots, p.join(p.home, ".gemini")))
}

func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
