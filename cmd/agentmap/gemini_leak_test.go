package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
)

// TestGeminiChatsLeakNothing is the privacy audit of the chats the real
// Gemini CLI wrote in the end-to-end suite (watchers/gemini/testdata/real;
// every scripted text there carries "zqcanary", and the client wrote the
// suite's throwaway directory into its outputs): a scan, the operator
// commands, the report and usage tables, and every export in every path
// mode take the Gemini sessions like the others' and print none of it.
func TestGeminiChatsLeakNothing(t *testing.T) {
	home := privateHome(t)
	t.Setenv("GEMINI_CLI_HOME", "")
	repo := filepath.Join(home, "src", "gemini-demo")
	proj := filepath.Join(home, ".gemini", "tmp", "gemini-demo")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(proj, "chats")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".project_root"), []byte(repo+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "watchers", "gemini", "testdata", "real", "tmp", "gemini-demo", "chats")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(proj, "chats", rel)
		os.MkdirAll(filepath.Dir(to), 0o700)
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The text of the chats and the directory the client worked in. The
	// home directory (and so the project's path) may appear only where
	// log files are named: the daemon's log and its record of sources and
	// carry-state.
	needles := []string{"zqcanary", "agentmap-e2e-", home}
	namesFiles := func(name string) bool {
		return name == "scan log" || strings.HasPrefix(name, "state database")
	}

	var outputs []struct {
		name string
		b    []byte
	}
	add := func(name string, b []byte) {
		outputs = append(outputs, struct {
			name string
			b    []byte
		}{name, b})
	}
	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := run(t, "scan", "--data-dir", data, "--log-level", "debug", "--root", "gemini="+filepath.Join(home, ".gemini"))
	if code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, stderr)
	}
	add("scan log", []byte(stdout+stderr))
	maps := 0
	filepath.WalkDir(daemon.MapsDir(data), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			add("map "+filepath.Base(p), b)
			maps++
		}
		return nil
	})
	if maps != 3 {
		t.Fatalf("%d maps, want the three sessions", maps)
	}
	for _, p := range readState(t, daemon.StatePath(data)) {
		add("state database: "+p.where, p.data)
	}
	for _, args := range [][]string{{"list", "--agent", "gemini"}, {"list", "--json"}, {"status"}, {"status", "--json"},
		{"show", "9a9684ed-772c-4682-baa6-4f2e22485ef6"}, {"show", "--json", "9a9684ed-772c-4682-baa6-4f2e22485ef6"}} {
		code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		add(strings.Join(args, " "), []byte(stdout+stderr))
		if args[0] == "list" && len(args) == 3 && !strings.Contains(stdout, "9a9684ed") {
			t.Errorf("list --agent gemini lists no session:\n%s", stdout)
		}
	}
	reportOutputs(t, data, "9a9684ed-772c-4682-baa6-4f2e22485ef6", add)
	for _, f := range export.Formats() {
		for _, mode := range []string{"", "dirs_only", "hashed"} {
			out := filepath.Join(t.TempDir(), "export"+f.Ext())
			args := []string{"export", "--format", string(f), "--data-dir", data, "--out", out, "--agent", "gemini"}
			if mode != "" {
				args = append(args, "--path-mode", mode)
			}
			code, _, stderr := run(t, args...)
			if code != exitOK {
				t.Fatalf("export %s %s: exit %d\n%s", f, mode, code, stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 {
				t.Errorf("export %s %s is empty", f, mode)
			}
			add("export "+string(f)+" "+mode, append(b, stderr...))
		}
	}
	for _, o := range outputs {
		text := readable(o.b)
		for _, n := range needles {
			if n == home && namesFiles(o.name) {
				continue
			}
			if i := bytes.Index(bytes.ToLower(text), bytes.ToLower([]byte(n))); i >= 0 {
				t.Errorf("%s holds %q at byte %d", o.name, n, i)
			}
		}
	}
	var list []json.RawMessage
	_, stdout, _ = run(t, "list", "--json", "--data-dir", data)
	if json.Unmarshal([]byte(stdout), &list) != nil || len(list) != 3 {
		t.Errorf("list --json: %s", stdout)
	}
	t.Logf("searched %d outputs", len(outputs))
}
