package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Each case sets one key to a bad value; the problem must name that key and
// the line it is on (the value is always on line 3 of the document).
func TestInvalidValues(t *testing.T) {
	tests := []struct {
		name, doc, key, msg string
	}{
		{"version", "# c\n\nversion = 2\n", "version", "unsupported version 2"},
		{"data_dir relative", "# c\n\ndata_dir = \"rel/dir\"\n", "data_dir", "absolute"},
		{"data_dir empty", "# c\n\ndata_dir = \"\"\n", "data_dir", "must not be empty"},
		{"path_mode", "[maps]\n\npath_mode = \"plain\"\n", "maps.path_mode", `"plain" is not one of relative, dirs_only, hashed`},
		{"hash_key_file", "[maps]\n\nhash_key_file = \"key\"\n", "maps.hash_key_file", "absolute"},
		{"event_cap zero", "[maps]\n\nevent_cap = 0\n", "maps.event_cap", "between 1 and"},
		{"event_cap huge", "[maps]\n\nevent_cap = 5000000\n", "maps.event_cap", "between 1 and"},
		{"idle short", "[flush]\n\nidle = \"1s\"\n", "flush.idle", "between 10s and 7d"},
		{"idle long", "[flush]\n\nidle = \"30d\"\n", "flush.idle", "between 10s and 7d"},
		{"idle not a duration", "[flush]\n\nidle = \"soon\"\n", "flush.idle", "not a duration"},
		{"idle a number", "[flush]\n\nidle = 15\n", "flush.idle", "not a duration"},
		{"max_line small", "[watch]\n\nmax_line = \"1KiB\"\n", "watch.max_line", "between 1MiB and 1GiB"},
		{"max_line not a size", "[watch]\n\nmax_line = \"big\"\n", "watch.max_line", "not a size"},
		{"roots relative", "[agents.claude]\n\nroots = [\"/ok\", \"rel\"]\n", "agents.claude.roots", "entry 2 must be an absolute path"},
		{"roots empty entry", "[agents.codex]\n\nroots = [\"\"]\n", "agents.codex.roots", "entry 1 is empty"},
		{"enabled without roots", "[agents.codex]\nenabled = true\nroots = []\n", "agents.codex.roots", "at least one root"},
		{"app_roots relative", "[agents.cursor]\n\napp_roots = [\"User\"]\n", "agents.cursor.app_roots", "entry 1 must be an absolute path"},
		{"rescan", "[watch]\n\nrescan = \"10ms\"\n", "watch.rescan", "between 1s and 1d"},
		{"debounce", "[watch]\n\ndebounce = \"1m\"\n", "watch.debounce", "between 0 and 10s"},
		{"retire_after short", "[watch]\n\nretire_after = \"10s\"\n", "watch.retire_after", "between 1m and 30d"},
		{"retire_after long", "[watch]\n\nretire_after = \"60d\"\n", "watch.retire_after", "between 1m and 30d"},
		{"exclude relative", "[privacy]\n\nexclude = [\"a/b\"]\n", "privacy.exclude", "entry 1: must be absolute"},
		{"exclude malformed", "[privacy]\n\nexclude = [\"/a/[b\"]\n", "privacy.exclude", "malformed glob"},
		{"exclude partial stars", "[privacy]\n\nexclude = [\"/a/x**\"]\n", "privacy.exclude", "whole path segment"},
		{"exclude empty", "[privacy]\n\nexclude = [\" \"]\n", "privacy.exclude", "empty pattern"},
		{"every short", "[export]\n\nevery = \"30s\"\n", "export.every", "at least 1m"},
		{"export dir", "[export]\n\ndir = \"out\"\n", "export.dir", "absolute"},
		{"formats unknown", "[export]\n\nformats = [\"zip\"]\n", "export.formats", `"zip" is not one of`},
		{"formats twice", "[export]\n\nformats = [\"jsonl\", \"jsonl\"]\n", "export.formats", "listed twice"},
		{"formats none while scheduled", "[export]\nevery = \"24h\"\nformats = []\n", "export.formats", "at least one format"},
		{"keep negative", "[export]\n\nkeep = -1\n", "export.keep", "0 (keep all) or more"},
		{"since", "[export]\n\nsince = \"yesterday\"\n", "export.since", "not incremental, all or a window"},
		{"since zero window", "[export]\n\nsince = \"0\"\n", "export.since", "not incremental, all or a window"},
		{"log level", "[log]\n\nlevel = \"loud\"\n", "log.level", `"loud" is not one of debug, info, warn, error`},
		{"price negative", "[prices.\"gpt-5\"]\n\ninput = -1.0\ncache_write = 1.0\ncache_read = 0.1\noutput = 8.0\n", `prices.gpt-5.input`, "between 0 and"},
		{"price quoted model", "[prices.\"my model\"]\n\noutput = 1e9\ninput = 1.0\ncache_write = 1.0\ncache_read = 0.1\n", `prices."my model".output`, "between 0 and"},
		{"price empty model", "[prices.\"\"]\n\ninput = 1.0\n", `prices.""`, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse("c.toml", tt.doc, linux(nil))
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			if c != nil {
				t.Error("a config came back with an error")
			}
			probs := Problems(err)
			if len(probs) != 1 {
				t.Fatalf("want one problem, got %d: %v", len(probs), err)
			}
			p := probs[0]
			if p.Key != tt.key || !strings.Contains(p.Msg, tt.msg) || p.File != "c.toml" {
				t.Errorf("problem = %q (key %q), want key %q and %q", p.Error(), p.Key, tt.key, tt.msg)
			}
			want := 3
			if tt.key == `prices.""` {
				want = 1 // the table header names the empty model
			}
			if p.Line != want {
				t.Errorf("line = %d, want %d (%v)", p.Line, want, p)
			}
			if !strings.HasPrefix(p.Error(), "c.toml:") {
				t.Errorf("message does not start with file:line: %q", p.Error())
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name, doc, key string
		line           int
		hint           string
	}{
		{"top level", "version = 1\ndata_dri = \"/x\"\n", "data_dri", 2, "known at the top level: version, data_dir"},
		{"in a table", "[maps]\npath_mode = \"relative\"\n\npathmode = \"hashed\"\n", "maps.pathmode", 4, "known in [maps]: path_mode"},
		// An unknown table is one problem, at its header, not one for it
		// and one for each of its keys.
		{"unknown table", "[mapz]\nx = 1\n", "mapz", 1, "unknown table [mapz] (known at the top level: version"},
		{"unknown agent", "[agents.aider]\nenabled = true\nroots = []\n", "agents.aider", 1, "unknown table [agents.aider] (known in [agents]: claude, codex, cursor, opencode, copilot, gemini)"},
		{"dotted key", "maps.evnt_cap = 3\n", "maps.evnt_cap", 1, "known in [maps]"},
		{"inline table", "agents = { claude = { enabled = true, rots = [] } }\n", "agents.claude.rots", 1, "known in [agents.claude]: enabled, roots"},
		{"cursor lists its embedded keys", "[agents.cursor]\napproots = []\n", "agents.cursor.approots", 2, "known in [agents.cursor]: enabled, roots, app_roots"},
		{"app_roots on another agent", "[agents.codex]\napp_roots = []\n", "agents.codex.app_roots", 2, "known in [agents.codex]: enabled, roots)"},
		{"price field", "[prices.x]\ninput = 1.0\ninptu = 2.0\ncache_write = 1.0\ncache_read = 0.1\noutput = 2.0\n", "prices.x.inptu", 3, "cache_write"},
		{"after a multi-line array", "[privacy]\nexclude = [\n  \"/a\",\n  \"/b\",\n]\nexcludes = []\n", "privacy.excludes", 6, "known in [privacy]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("c.toml", tt.doc, linux(nil))
			probs := Problems(err)
			if len(probs) == 0 {
				t.Fatal("accepted")
			}
			if len(probs) != 1 {
				t.Errorf("%d problems, want one: %v", len(probs), err)
			}
			var found bool
			for _, p := range probs {
				if p.Key == tt.key {
					found = true
					if p.Line != tt.line || !strings.Contains(p.Msg, tt.hint) {
						t.Errorf("problem %q: want line %d and %q", p.Error(), tt.line, tt.hint)
					}
				}
			}
			if !found {
				t.Errorf("no problem names %q: %v", tt.key, err)
			}
		})
	}
}

func TestWrongTypes(t *testing.T) {
	tests := []struct {
		name, doc, key string
		line           int
		want           string
	}{
		{"string for int", "[maps]\nevent_cap = \"many\"\n", "maps.event_cap", 2, "TOML string, expected an integer"},
		{"int for string", "\n\ndata_dir = 5\n", "data_dir", 3, "expected a string"},
		{"string for bool", "[agents.codex]\nenabled = \"yes\"\n", "agents.codex.enabled", 2, "expected true or false"},
		{"string for embedded bool", "[agents.cursor]\nenabled = 1\n", "agents.cursor.enabled", 2, "expected true or false"},
		{"string for list", "[agents.codex]\nroots = \"/a\"\n", "agents.codex.roots", 2, "expected an array of strings"},
		{"list for duration", "[flush]\nidle = [\"15m\"]\n", "flush.idle", 2, `expected a duration string such as "15m"`},
		{"value for table", "maps = 3\n", "maps", 1, "expected a table"},
		{"string for price", "[prices.x]\n\ninput = \"cheap\"\n", "prices.x.input", 3, "expected a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("c.toml", tt.doc, linux(nil))
			probs := Problems(err)
			if len(probs) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			p := probs[0]
			if p.Key != tt.key || p.Line != tt.line || !strings.Contains(p.Msg, "wrong type") || !strings.Contains(p.Msg, tt.want) {
				t.Errorf("problem %q (key %q line %d), want key %q line %d and %q", p.Error(), p.Key, p.Line, tt.key, tt.line, tt.want)
			}
		})
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := parse("c.toml", "version = 1\n\n[maps\npath_mode = 1\n", linux(nil))
	probs := Problems(err)
	// The TOML library reports an unclosed header where it noticed it: at
	// the end of its line, which it counts as the next one.
	if len(probs) != 1 || (probs[0].Line != 3 && probs[0].Line != 4) || !strings.Contains(probs[0].Msg, "syntax") {
		t.Fatalf("got %v", err)
	}
}

// Every problem of a file is reported at once, in file order, and a wrong
// type in one table does not hide the problems of another.
func TestAllProblemsAtOnce(t *testing.T) {
	doc := `version = 1
[maps]
event_cap = "x"
[flush]
idle = "1s"
[log]
level = "loud"
colour = true
`
	_, err := parse("c.toml", doc, linux(nil))
	probs := Problems(err)
	var got []string
	for _, p := range probs {
		got = append(got, p.Key)
	}
	want := []string{"maps.event_cap", "flush.idle", "log.level", "log.colour"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems %q, want %q\n%v", got, want, err)
	}
	for i := 1; i < len(probs); i++ {
		if probs[i].Line < probs[i-1].Line {
			t.Errorf("problems out of file order: %v", err)
		}
	}
}

func TestProblemsNeverQuoteOtherLines(t *testing.T) {
	// A problem names its key and line; it must not echo unrelated content
	// of the file (which could be anything the user pasted).
	const canary = "CANARY-7f3a"
	doc := "# " + canary + "\n[maps]\nevent_cap = \"x\"\nnope = 1\n"
	_, err := parse("c.toml", doc, linux(nil))
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("error %v", err)
	}
}

func TestKeyLines(t *testing.T) {
	doc := `# comment
version = 1
"quoted key" = 2
a.b . c = 3
[t]
s = """
x = 1
"""
after_string = 1
arr = [
  "y = 2",
  [1, 2],
]
after_array = 1
lit = '''
z = 3 '''
after_literal = 1
inline = { k = 1, j = { m = 2 } }
'odd.key' = "v" # trailing = comment
[[list]]
item = 1
[ spaced . "table" ]
k = "a \" = b"
`
	kl := scanKeyLines(doc)
	want := map[string]int{
		"version": 2, `"quoted key"`: 3, "a.b.c": 4, "t": 5, "t.s": 6, "t.after_string": 9,
		"t.arr": 10, "t.after_array": 14, "t.lit": 15, "t.after_literal": 17, "t.inline": 18,
		"t.inline.j.m": 18, `t."odd.key"`: 19, "list.item": 21, "spaced.table.k": 23,
		// Keys the document does not set resolve to their closest table.
		"t.x": 5, "t.z": 5,
	}
	for k, n := range want {
		if got := kl.line(k); got != n {
			t.Errorf("line(%s) = %d, want %d", k, got, n)
		}
	}
	for _, k := range []string{"x", "y", "z", "missing", "u.v"} {
		if got := kl.line(k); got != 0 {
			t.Errorf("line(%s) = %d, want none", k, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(string(render(defaultsFor(linux(nil)), linux(nil), true)))
	f.Add("[maps]\nevent_cap = \"x\"\n[prices.\"a\"]\ninput = -1.0\n")
	f.Add("a = [\n'''\n]\n")
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := parse("f.toml", doc, linux(nil))
		if (c == nil) == (err == nil) {
			t.Fatalf("config %v with error %v", c, err)
		}
		if err != nil && len(Problems(err)) == 0 {
			t.Fatalf("error without problems: %v", err)
		}
	})
}

// A [prices] table that leaves out a rate would price those tokens at $0
// without a word: each missing rate is a problem at the table's line, and a
// rate written as 0 is accepted as meant.
func TestPriceRatesRequired(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		missing   []string
		line      int
	}{
		{"cache rates left out", "version = 1\n[prices.\"claude-opus-4-6\"]\ninput = 1.0\noutput = 2.0\n",
			[]string{"prices.claude-opus-4-6.cache_write", "prices.claude-opus-4-6.cache_read"}, 2},
		{"only output", "[prices.x]\noutput = 2.0\n", []string{"prices.x.input", "prices.x.cache_write", "prices.x.cache_read"}, 1},
		{"inline table", "prices = { \"my model\" = { input = 1.0, output = 2.0, cache_read = 0.1 } }\n",
			[]string{`prices."my model".cache_write`}, 1},
		{"dotted keys", "[prices]\nunknown.input = 1.25\nunknown.cache_read = 0.125\nunknown.output = 10.0\n",
			[]string{"prices.unknown.cache_write"}, 1}, // the table a dotted key implies has the line of [prices]
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse("c.toml", tt.doc, linux(nil))
			if err == nil {
				t.Fatalf("accepted: %+v", c.Prices)
			}
			probs := Problems(err)
			if len(probs) != len(tt.missing) {
				t.Fatalf("%d problems, want %d: %v", len(probs), len(tt.missing), err)
			}
			for i, p := range probs {
				if p.Key != tt.missing[i] || p.Line != tt.line || !strings.Contains(p.Msg, "must be set") || !strings.Contains(p.Msg, "$0") {
					t.Errorf("problem %q (key %q line %d), want key %q line %d", p.Error(), p.Key, p.Line, tt.missing[i], tt.line)
				}
			}
		})
	}
	c, err := parse("c.toml", "[prices.\"my-local-llama\"]\ninput = 0.0\ncache_write = 0.0\ncache_read = 0.0\noutput = 0.0\n"+
		"[prices.unknown]\ninput = 1.25\ncache_write = 1.25\ncache_read = 0.125\noutput = 10.0\n", linux(nil))
	if err != nil {
		t.Fatalf("every rate written: %v", err)
	}
	if p := c.Prices["unknown"]; p.Input != 1.25 || p.CacheRead != 0.125 || len(c.Prices) != 2 {
		t.Errorf("prices = %+v", c.Prices)
	}
}

// Every key of a wrong type in a table is named, with its line, not the
// first alone (the table is decoded key by key once it fails whole), in
// the tables within too.
func TestEveryWrongTypeInATableIsNamed(t *testing.T) {
	doc := "version = 1\n[maps]\nevent_cap = \"lots\"\npath_mode = 7\n[agents.claude]\nenabled = \"yes\"\nroots = 5\n[agents.codex]\nenabled = false\n"
	_, err := parse("c.toml", doc, linux(nil))
	var got []string
	for _, p := range Problems(err) {
		got = append(got, fmt.Sprintf("%d %s", p.Line, p.Key))
	}
	want := []string{"3 maps.event_cap", "4 maps.path_mode", "6 agents.claude.enabled", "7 agents.claude.roots"}
	if !slices.Equal(got, want) {
		t.Fatalf("problems %q, want %q\n%v", got, want, err)
	}
}
