package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export"
)

// chatCanary marks every scripted text in the logs the real OpenCode and
// Copilot CLI wrote in the end-to-end suite (prompts, replies, tool
// inputs and outputs, file contents, subagent prompts, titles): the
// recorded logs in watchers/opencode/testdata and watchers/copilot/testdata.
const chatCanary = "zqcanary"

// TestChatAgentsLeakNothing is the privacy audit of the OpenCode and
// Copilot CLI logs the real clients wrote: the maps of `agentmap build` in
// every path mode, a daemon's scan (its maps, log and state database, also
// over logs with lines cut short), list, status and show, the report and the
// usage tables, and every export format in every path mode hold no scripted
// text.
func TestChatAgentsLeakNothing(t *testing.T) {
	home := privateHome(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("COPILOT_HOME", "")
	// The suite's store only: the first recorded one has the model read a
	// file named after the canary, and file paths belong in a map.
	dbs, _ := filepath.Glob(filepath.Join("..", "..", "watchers", "opencode", "testdata", "*-e2e.db"))
	logs, _ := filepath.Glob(filepath.Join("..", "..", "watchers", "copilot", "testdata", "*", "*", "events.jsonl"))
	if len(dbs) == 0 || len(logs) == 0 {
		t.Fatal("no recorded OpenCode or Copilot CLI logs")
	}
	var hay haystack
	put := func(dir, from, to string, cut bool) string {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if cut {
			b = cutLines(b)
		}
		if !bytes.Contains(bytes.ToLower(b), []byte(chatCanary)) {
			t.Fatalf("%s holds no canary: the audit would prove nothing", from)
		}
		p := filepath.Join(dir, filepath.FromSlash(to))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lay := func(dir string, cut bool) ([]string, []string) {
		var files, roots []string
		if !cut {
			for i, db := range dbs {
				root := fmt.Sprintf("opencode%d", i)
				files = append(files, put(dir, db, root+"/opencode.db", false))
				roots = append(roots, "--root", "opencode="+filepath.Join(dir, root))
			}
		}
		for _, l := range logs {
			id := filepath.Base(filepath.Dir(l))
			files = append(files, put(dir, l, ".copilot/session-state/"+id+"/events.jsonl", cut))
		}
		return files, append(roots, "--root", "copilot="+filepath.Join(dir, ".copilot"))
	}

	files, roots := lay(home, false)
	var stderr bytes.Buffer
	sessions, failed := collect(context.Background(), files, "auto", &stderr)
	if failed || len(sessions) < len(dbs)+len(logs) {
		t.Fatalf("build found %d sessions: %s", len(sessions), stderr.String())
	}
	hay.add("build log", stderr.Bytes())
	for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
		opts := builder.Options{PathMode: mode, HashKey: []byte("0123456789abcdef0123456789abcdef"), Producer: "agentmap test"}
		for _, s := range sessions {
			m, err := buildMap(s, opts)
			if err != nil {
				t.Fatalf("%s: %v", s.native, err)
			}
			gz, _ := m.Gzip()
			hay.add(fmt.Sprintf("map of build (%s, %s)", mode, s.native), gz)
		}
	}

	data := filepath.Join(t.TempDir(), "data")
	code, stdout, errs := run(t, append([]string{"scan", "--data-dir", data, "--log-level", "debug"}, roots...)...)
	if code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, errs)
	}
	hay.add("daemon log", []byte(stdout+errs))
	stored := 0
	filepath.WalkDir(daemon.MapsDir(data), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			hay.add("daemon map "+filepath.Base(p), b)
			stored++
		}
		return nil
	})
	if stored != len(sessions) {
		t.Errorf("the daemon wrote %d maps, build %d", stored, len(sessions))
	}
	for _, p := range readState(t, daemon.StatePath(data)) {
		hay.add("state database: "+p.where, p.data)
	}
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"list", "--agent", "opencode"}, {"list", "--agent", "copilot"}, {"status"}, {"status", "--json"}} {
		code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		hay.add(strings.Join(args, " "), []byte(stdout+stderr))
		if len(args) == 3 && !strings.Contains(stdout, args[2]) {
			t.Errorf("list --agent %s lists none of its sessions:\n%s", args[2], stdout)
		}
	}
	for _, s := range sessions {
		_, stdout, stderr := run(t, "show", "--data-dir", data, s.native)
		hay.add("show "+s.native, []byte(stdout+stderr))
	}
	reportOutputs(t, data, sessions[0].native, hay.add)
	for _, f := range export.Formats() {
		for _, mode := range []string{"", "dirs_only", "hashed"} {
			out := filepath.Join(t.TempDir(), "export"+f.Ext())
			args := []string{"export", "--format", string(f), "--data-dir", data, "--out", out}
			if mode != "" {
				args = append(args, "--path-mode", mode)
			}
			code, _, stderr := run(t, args...)
			if code != exitOK {
				t.Fatalf("export %s %s: exit %d\n%s", f, mode, code, stderr)
			}
			b, _ := os.ReadFile(out)
			hay.add("export "+string(f)+" "+mode, append(b, stderr...))
		}
	}

	// Lines cut short: what the errors say.
	broken := t.TempDir()
	bfiles, broots := lay(broken, true)
	var buildErr bytes.Buffer
	collect(context.Background(), bfiles, "auto", &buildErr)
	hay.add("build log (cut lines)", buildErr.Bytes())
	bdata := filepath.Join(t.TempDir(), "data")
	_, stdout, errs = run(t, append([]string{"scan", "--data-dir", bdata, "--log-level", "debug"}, broots...)...)
	hay.add("daemon log (cut lines)", []byte(stdout+errs))
	for _, p := range readState(t, daemon.StatePath(bdata)) {
		hay.add("state database (cut lines): "+p.where, p.data)
	}

	text := bytes.ToLower(hay.buf.Bytes())
	leaks := 0
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(chatCanary))
		if i < 0 {
			break
		}
		leaks++
		if leaks <= 20 {
			t.Errorf("scripted text found in %s", hay.where(off+i))
		}
		off += i + len(chatCanary)
	}
	t.Logf("searched %d outputs, %d bytes", len(hay.names), hay.buf.Len())
}
