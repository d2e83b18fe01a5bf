package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// linux is a fixed platform so that tests do not depend on the machine.
func linux(env map[string]string) platform {
	return platform{goos: "linux", home: "/home/u", getenv: func(k string) string { return env[k] }}
}

func TestDefaultsPerOS(t *testing.T) {
	tests := []struct {
		name    string
		p       platform
		data    string
		claude  []string
		codex   []string
		cursor  []string
		app     []string
		hashKey string
	}{
		{
			name:    "linux",
			p:       linux(nil),
			data:    "/home/u/.local/share/agentmap",
			claude:  []string{"/home/u/.claude", "/home/u/.config/claude"},
			codex:   []string{"/home/u/.codex"},
			cursor:  []string{"/home/u/.cursor"},
			app:     []string{"/home/u/.config/Cursor/User"},
			hashKey: "/home/u/.local/share/agentmap/hash.key",
		},
		{
			name: "linux with XDG and agent variables",
			p: linux(map[string]string{
				"XDG_DATA_HOME":     "/xdg/data",
				"XDG_CONFIG_HOME":   "/xdg/config",
				"CLAUDE_CONFIG_DIR": " /a/claude , ~/b,,/home/u/.claude",
				"CODEX_HOME":        "/c/codex",
			}),
			data:    "/xdg/data/agentmap",
			claude:  []string{"/a/claude", "/home/u/b", "/home/u/.claude", "/xdg/config/claude"},
			codex:   []string{"/c/codex", "/home/u/.codex"},
			cursor:  []string{"/home/u/.cursor"},
			app:     []string{"/xdg/config/Cursor/User"},
			hashKey: "/xdg/data/agentmap/hash.key",
		},
		{
			name:    "linux ignores a relative XDG_DATA_HOME",
			p:       linux(map[string]string{"XDG_DATA_HOME": "rel"}),
			data:    "/home/u/.local/share/agentmap",
			claude:  []string{"/home/u/.claude", "/home/u/.config/claude"},
			codex:   []string{"/home/u/.codex"},
			cursor:  []string{"/home/u/.cursor"},
			app:     []string{"/home/u/.config/Cursor/User"},
			hashKey: "/home/u/.local/share/agentmap/hash.key",
		},
		{
			name:    "darwin",
			p:       platform{goos: "darwin", home: "/Users/u"},
			data:    "/Users/u/Library/Application Support/agentmap",
			claude:  []string{"/Users/u/.claude", "/Users/u/.config/claude"},
			codex:   []string{"/Users/u/.codex"},
			cursor:  []string{"/Users/u/.cursor"},
			app:     []string{"/Users/u/Library/Application Support/Cursor/User"},
			hashKey: "/Users/u/Library/Application Support/agentmap/hash.key",
		},
		{
			name: "windows",
			p: platform{goos: "windows", home: `C:\Users\u`, getenv: func(k string) string {
				return map[string]string{"LOCALAPPDATA": `C:\Users\u\AppData\Local`, "APPDATA": `C:\Users\u\AppData\Roaming`}[k]
			}},
			data:    `C:\Users\u\AppData\Local\agentmap`,
			claude:  []string{`C:\Users\u\.claude`, `C:\Users\u\.config\claude`},
			codex:   []string{`C:\Users\u\.codex`},
			cursor:  []string{`C:\Users\u\.cursor`},
			app:     []string{`C:\Users\u\AppData\Roaming\Cursor\User`},
			hashKey: `C:\Users\u\AppData\Local\agentmap\hash.key`,
		},
		{
			name:    "windows without LOCALAPPDATA",
			p:       platform{goos: "windows", home: `C:\Users\u`},
			data:    `C:\Users\u\AppData\Local\agentmap`,
			claude:  []string{`C:\Users\u\.claude`, `C:\Users\u\.config\claude`},
			codex:   []string{`C:\Users\u\.codex`},
			cursor:  []string{`C:\Users\u\.cursor`},
			app:     []string{`C:\Users\u\AppData\Roaming\Cursor\User`},
			hashKey: `C:\Users\u\AppData\Local\agentmap\hash.key`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultsFor(tt.p)
			if c.DataDir != tt.data {
				t.Errorf("data dir = %q, want %q", c.DataDir, tt.data)
			}
			if c.Maps.HashKeyFile != tt.hashKey {
				t.Errorf("hash key file = %q, want %q", c.Maps.HashKeyFile, tt.hashKey)
			}
			for _, a := range []struct {
				name      string
				got, want []string
			}{{"claude", c.Agents.Claude.Roots, tt.claude}, {"codex", c.Agents.Codex.Roots, tt.codex}, {"cursor", c.Agents.Cursor.Roots, tt.cursor}, {"cursor app", c.Agents.Cursor.AppRoots, tt.app}} {
				if !reflect.DeepEqual(a.got, a.want) {
					t.Errorf("%s roots = %q, want %q", a.name, a.got, a.want)
				}
			}
			if err := c.validate(tt.p); err != nil {
				t.Errorf("defaults do not validate: %v", err)
			}
		})
	}
}

func TestDefaultIsValidHere(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

// The default file must parse back to exactly the defaults, on every OS.
func TestDefaultFileRoundTrip(t *testing.T) {
	for _, p := range []platform{
		linux(nil),
		linux(map[string]string{"CLAUDE_CONFIG_DIR": "/x/claude", "XDG_DATA_HOME": "/xdg"}),
		{goos: "darwin", home: "/Users/u"},
		{goos: "windows", home: `C:\Users\u`},
	} {
		doc := string(render(defaultsFor(p), p, true))
		got, err := parse("default.toml", doc, p)
		if err != nil {
			t.Fatalf("%s: default file does not load: %v", p.goos, err)
		}
		if want := defaultsFor(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: default file loads as\n%+v\nwant\n%+v", p.goos, got, want)
		}
	}
	// And the real one, through Load.
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, DefaultFile(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.File = path
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultFile loads as\n%+v\nwant\n%+v", got, want)
	}
}

// TOML (config show) must load back to the same config, whatever it holds.
func TestTOMLRoundTrip(t *testing.T) {
	p := linux(nil)
	c := defaultsFor(p)
	c.DataDir = "/srv/agentmap data"
	c.Maps.PathMode = "hashed"
	c.Maps.HashKeyFile = `/keys/"odd" \ key`
	c.Maps.EventCap = 500
	c.Flush.Idle = Duration{90 * time.Second}
	c.Watch.MaxLine = 3 << 20
	c.Agents.Cursor.Enabled = false
	c.Agents.Codex.Roots = []string{"/a", "/b"}
	c.Agents.Cursor.AppRoots = []string{"/c/User"}
	c.Watch.Rescan = Duration{30 * time.Second}
	c.Watch.Debounce = Duration{0}
	c.Privacy.Exclude = []string{"~/clients/**", "secret-*"}
	c.Export.Every = Duration{24 * time.Hour}
	c.Export.Formats = []string{"jsonl", "attemptdb"}
	c.Export.Keep = 0
	c.Export.Since = "7d"
	c.Log.Level = "debug"
	c.Prices = map[string]Price{
		"claude-opus-4": {Input: 15, CacheWrite: 18.75, CacheRead: 1.5, Output: 75, CacheWrite1h: 30, Fast: 6},
		"gpt 5":         {Input: 1.25, Output: 10, LongAbove: 272000, LongInput: 2, LongOutput: 1.5},
	}
	got, err := parse("show.toml", string(render(c, p, false)), p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, c)
	}
}

func TestMissingFileMeansDefaults(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "absent.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("missing file gave %+v", c)
	}
}

func TestDataDirMovesDerivedPaths(t *testing.T) {
	p := linux(nil)
	c, err := parse("c.toml", "data_dir = \"~/am\"\n", p)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/home/u/am" || c.Maps.HashKeyFile != "/home/u/am/hash.key" || c.Export.Dir != "/home/u/am/exports" {
		t.Errorf("derived paths did not follow data_dir: %q %q %q", c.DataDir, c.Maps.HashKeyFile, c.Export.Dir)
	}
	c, err = parse("c.toml", "data_dir = \"/d\"\n[maps]\nhash_key_file = \"/k/key\"\n[export]\ndir = \"~/out\"\n", p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Maps.HashKeyFile != "/k/key" || c.Export.Dir != "/home/u/out" {
		t.Errorf("explicit paths were moved: %q %q", c.Maps.HashKeyFile, c.Export.Dir)
	}
}

func TestPartialFileKeepsOtherDefaults(t *testing.T) {
	p := linux(nil)
	c, err := parse("c.toml", "[agents.codex]\nenabled = false\n[flush]\nidle = \"2h\"\n", p)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultsFor(p)
	want.Agents.Codex.Enabled = false
	want.Flush.Idle = Duration{2 * time.Hour}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvConfig, filepath.Join(dir, "env.toml"))
	if got, _ := Path(filepath.Join(dir, "flag.toml")); got != filepath.Join(dir, "flag.toml") {
		t.Errorf("--config not preferred: %s", got)
	}
	if got, _ := Path(""); got != filepath.Join(dir, "env.toml") {
		t.Errorf("%s not used: %s", EnvConfig, got)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	ucd, err := os.UserConfigDir()
	if err != nil {
		t.Skip("no user config dir here")
	}
	if got, _ := Path(""); got != filepath.Join(ucd, "agentmap", "config.toml") {
		t.Errorf("default path = %s", got)
	}
	if got, _ := Path("rel.toml"); !filepath.IsAbs(got) || !strings.HasSuffix(got, "rel.toml") {
		t.Errorf("relative --config not made absolute: %s", got)
	}
}

func TestPriceFor(t *testing.T) {
	c := &Config{Prices: map[string]Price{
		"claude":          {Input: 1},
		"claude-opus-4":   {Input: 2},
		"claude-opus-4-1": {Input: 3},
	}}
	for model, want := range map[string]float64{
		"claude-opus-4-1-20250805": 3,
		"claude-opus-4-20250514":   2,
		"claude-sonnet-4":          1,
		"gpt-5":                    0,
	} {
		got, ok := c.PriceFor(model)
		if got.Input != want || ok != (want != 0) {
			t.Errorf("PriceFor(%q) = %v %v, want %v", model, got.Input, ok, want)
		}
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"15m": 15 * time.Minute, "90s": 90 * time.Second, "7d": 7 * 24 * time.Hour, "0": 0, "1h30m": 90 * time.Minute,
	} {
		var d Duration
		if err := d.UnmarshalText([]byte(in)); err != nil || d.Duration != want {
			t.Errorf("duration %q = %v, %v; want %v", in, d.Duration, err, want)
		}
		back, _ := d.MarshalText()
		var again Duration
		if err := again.UnmarshalText(back); err != nil || again != d {
			t.Errorf("duration %q does not round trip through %q", in, back)
		}
	}
	for _, bad := range []string{"", "15", "abc", "-d", "1.5d", "99999999d"} {
		var d Duration
		if err := d.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("duration %q accepted", bad)
		}
	}
	for in, want := range map[string]Size{
		"64MiB": 64 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "1000": 1000, "2MB": 2e6, "7B": 7,
	} {
		var s Size
		if err := s.UnmarshalText([]byte(in)); err != nil || s != want {
			t.Errorf("size %q = %v, %v; want %v", in, int64(s), err, int64(want))
		}
		back, _ := s.MarshalText()
		var again Size
		if err := again.UnmarshalText(back); err != nil || again != s {
			t.Errorf("size %q does not round trip through %q", in, back)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "1TiB", "99999999999GiB"} {
		var s Size
		if err := s.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("size %q accepted", bad)
		}
	}
}

// The file `config init` writes leaves data_dir to the platform: made
// under one $XDG_DATA_HOME and read under another, it follows the second,
// as a file without the key does.
func TestInitFileLeavesDataDirToThePlatform(t *testing.T) {
	made := linux(map[string]string{"XDG_DATA_HOME": "/first"})
	read := linux(map[string]string{"XDG_DATA_HOME": "/second"})
	c, err := parse("config.toml", string(render(defaultsFor(made), made, true)), read)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/second/agentmap" {
		t.Errorf("data_dir of the init file read under another XDG_DATA_HOME: %q, want /second/agentmap", c.DataDir)
	}
}

// With no home directory the defaults under it are relative paths: a file
// loaded then is not blamed for them, while what it sets itself is
// checked, and a ~/ in it is told to stand for nothing.
func TestValidateWithoutHome(t *testing.T) {
	p := platform{goos: "linux", home: ""}
	if _, err := parse("c.toml", "[flush]\nidle = \"5m\"\n", p); err != nil {
		t.Errorf("defaults without a home: %v", err)
	}
	if _, err := parse("c.toml", "data_dir = \"/srv/am\"\n[agents.claude]\nroots = [\"/srv/claude\"]\n", p); err != nil {
		t.Errorf("absolute paths without a home: %v", err)
	}
	_, err := parse("c.toml", "data_dir = \"~/am\"\n[agents.codex]\nroots = [\"codex\"]\n", p)
	var msgs []string
	for _, pr := range Problems(err) {
		msgs = append(msgs, pr.Key+": "+pr.Msg)
	}
	want := []string{
		"data_dir: must be an absolute path or start with ~/ (but HOME is not set, so ~ stands for nothing)",
		"agents.codex.roots: entry 1 must be an absolute path or start with ~/ (but HOME is not set, so ~ stands for nothing)",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("problems %q, want %q", msgs, want)
	}
}
