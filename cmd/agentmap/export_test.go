package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/agentscope"
	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/export/sentience"
	"github.com/agentmap/agentmap/state/mapstore"
)

func exportSchemas(t *testing.T) *exportcheck.Schemas {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "schemas")
	s, err := exportcheck.LoadSchemas(dir)
	if os.IsNotExist(err) {
		t.Skipf("published schemas not available at %s: skipping", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// corpusStore builds every corpus session in opts' mode into a store laid
// out as the daemon's, and returns the data dir and the maps by session id.
func corpusStore(t *testing.T, opts builder.Options) (string, map[string]*builder.Map) {
	t.Helper()
	data := t.TempDir()
	store := mapstore.New(filepath.Join(data, "maps"))
	built := map[string]*builder.Map{}
	for _, agent := range []string{"claude", "codex", "cursor"} {
		var stderr bytes.Buffer
		sessions, _ := collect(context.Background(), corpusLogs(t, agent), "auto", &stderr)
		for _, s := range sessions {
			m, err := buildMap(s, opts)
			if errors.Is(err, builder.ErrEmptySession) {
				continue // a session with no events has no map
			}
			if err != nil {
				t.Fatalf("%s: %v", s.native, err)
			}
			gz, err := m.Gzip()
			if err != nil {
				t.Fatal(err)
			}
			start, _ := time.Parse(time.RFC3339Nano, m.Session.StartedAt)
			if err := store.Write(mapstore.RelPath(agent, m.NativeID(), start), gz); err != nil {
				t.Fatal(err)
			}
			built[m.Session.ID] = m
		}
	}
	return data, built
}

// TestExportCorpus exports the whole corpus in every format through the
// command, and checks each export against its published schema, its
// tool's rules and the leak rules.
func TestExportCorpus(t *testing.T) {
	schemas := exportSchemas(t)
	data, built := corpusStore(t, builder.Options{Producer: "agentmap test"})
	if len(built) < 10 {
		t.Fatalf("only %d corpus sessions", len(built))
	}
	out := t.TempDir()
	for _, f := range export.Formats() {
		for _, mode := range []string{"relative", "hashed"} {
			t.Run(string(f)+"/"+mode, func(t *testing.T) {
				target := filepath.Join(out, mode+"-"+string(f)+f.Ext())
				var stdout, stderr bytes.Buffer
				args := []string{"--format", string(f), "--data-dir", data, "--out", target, "--path-mode", mode}
				if code := cmdExport(context.Background(), args, &stdout, &stderr); code != exitOK {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
				body, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				if probs := schemas.Check(f, body, nil); len(probs) > 0 {
					t.Fatalf("%d problems, first: %s", len(probs), strings.Join(probs[:min(len(probs), 5)], "\n"))
				}
				t.Logf("%d sessions, %d bytes, %d lines", len(built), len(body), bytes.Count(body, []byte("\n")))
				if !strings.Contains(stderr.String(), ": "+strconv.Itoa(len(built))+" session(s)") {
					t.Errorf("not every session exported: %s", stderr.String())
				}
			})
		}
	}
}

// TestExportRerenderMatchesBuilder: a relative map re-rendered by export
// is byte-identical to the builder's map of the same events in that mode.
func TestExportRerenderMatchesBuilder(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	_, relative := corpusStore(t, builder.Options{Producer: "agentmap test"})
	for _, mode := range []redact.Mode{redact.ModeDirsOnly, redact.ModeHashed} {
		_, direct := corpusStore(t, builder.Options{Producer: "agentmap test", PathMode: mode, HashKey: key})
		for id, m := range relative {
			d, err := mapfile.FromMap(m)
			if err != nil {
				t.Fatal(err)
			}
			r, err := mapfile.Rerender(d, mode, key)
			if err != nil {
				t.Fatal(err)
			}
			want, err := direct[id].Canonical()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(r.Canonical, want) {
				t.Errorf("%s %s: re-rendered map differs from the builder's", mode, id)
			}
		}
	}
}

// TestExportAttemptDBSequence: consecutive exports from one data dir keep
// one device id and continue source_seq where the previous one stopped.
func TestExportAttemptDBSequence(t *testing.T) {
	data, _ := corpusStore(t, builder.Options{Producer: "agentmap test"})
	out := t.TempDir()
	var both []byte
	for i, name := range []string{"a.jsonl", "b.jsonl.gz"} {
		target := filepath.Join(out, name)
		var stdout, stderr bytes.Buffer
		args := []string{"--format", "attemptdb", "--data-dir", data, "--out", target, "--agent", []string{"claude", "codex"}[i]}
		if code := cmdExport(context.Background(), args, &stdout, &stderr); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		body, _ := os.ReadFile(target)
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		both = append(both, body...)
	}
	schemas := exportSchemas(t)
	if probs := schemas.Check(export.AttemptDB, both, nil); len(probs) > 0 {
		t.Fatalf("the two exports together: %s", strings.Join(probs[:min(len(probs), 5)], "\n"))
	}
	id, err := os.ReadFile(filepath.Join(data, deviceIDFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(data, deviceIDFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("device id file mode %v", fi.Mode().Perm())
	}
	if c := bytes.Count(both, []byte(`"device_id":"`+strings.TrimSpace(string(id))+`"`)); c != bytes.Count(both, []byte("\n")) {
		t.Errorf("%d of %d lines carry the kept device id", c, bytes.Count(both, []byte("\n")))
	}
}

// TestExportCorpusCallsPaired: over the whole corpus, each export has
// every tool call of every map once, as docs/exports.md says. AttemptDB:
// each call has exactly one tool_call_started and, after it, exactly one
// tool_call_finished or tool_call_failed (AttemptDB pairs them by session_id
// and tool.call_id), subagent launches, denied calls and calls that never
// returned alike. Sentience: one action per call, unsuccessful for a failed
// one. AgentScope: one action per call besides the summaries.
func TestExportCorpusCallsPaired(t *testing.T) {
	data, built := corpusStore(t, builder.Options{Producer: "agentmap test"})
	type counts struct{ calls, failed int }
	want := map[string]counts{}      // by session.id
	callIDs := map[string][]string{} // AttemptDB session_id → call ids
	sessionOf := map[string]string{} // AttemptDB session_id and Sentience run_id → session.id
	for id, bm := range built {
		d, err := mapfile.FromMap(bm)
		if err != nil {
			t.Fatal(err)
		}
		m := d.Map
		sid := attemptdb.SessionID(attemptdb.ProviderOf(m.Session.AgentTool), m.Session.NativeID())
		sessionOf[sid], sessionOf[sentience.RunID(m)] = id, id
		var c counts
		for _, e := range m.Events {
			if e.IsCall() {
				c.calls++
				callIDs[sid] = append(callIDs[sid], strconv.Itoa(e.Seq))
				if e.Err {
					c.failed++
				}
			}
		}
		want[id] = c
	}
	exported := func(f export.Format) []byte {
		t.Helper()
		target := filepath.Join(t.TempDir(), "out"+f.Ext())
		var stdout, stderr bytes.Buffer
		args := []string{"--format", string(f), "--data-dir", data, "--out", target}
		if code := cmdExport(context.Background(), args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d: %s", f, code, stderr.String())
		}
		body, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		return body
	}

	t.Run("attemptdb", func(t *testing.T) {
		type call struct{ started, ended int }
		calls := map[[2]string]*call{}
		for i, line := range bytes.Split(bytes.TrimSpace(exported(export.AttemptDB)), []byte("\n")) {
			var ev struct {
				Kind      string `json:"kind"`
				SessionID string `json:"session_id"`
				Tool      *struct {
					CallID string `json:"call_id"`
				} `json:"tool"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			if !strings.HasPrefix(ev.Kind, "tool_call_") {
				continue
			}
			if ev.Tool == nil {
				t.Fatalf("line %d: %s without a tool", i+1, ev.Kind)
			}
			key := [2]string{ev.SessionID, ev.Tool.CallID}
			c := calls[key]
			if c == nil {
				c = &call{}
				calls[key] = c
			}
			if ev.Kind == "tool_call_started" {
				c.started++
			} else if c.ended++; c.started == 0 {
				t.Errorf("line %d: %s of call %s in session %s before any tool_call_started", i+1, ev.Kind, key[1], sessionOf[key[0]])
			}
		}
		for key, c := range calls {
			if c.started != 1 || c.ended != 1 {
				t.Errorf("session %s call %s: %d tool_call_started, %d finished or failed, want 1 and 1", sessionOf[key[0]], key[1], c.started, c.ended)
			}
		}
		for sid, ids := range callIDs {
			for _, id := range ids {
				if calls[[2]string{sid, id}] == nil {
					t.Errorf("session %s call %s: no event", sessionOf[sid], id)
				}
			}
		}
		t.Logf("%d calls in %d sessions", len(calls), len(built))
	})

	t.Run("sentience", func(t *testing.T) {
		got := map[string]counts{}
		for i, line := range bytes.Split(bytes.TrimSpace(exported(export.Sentience)), []byte("\n")) {
			var l struct {
				Type  string `json:"type"`
				RunID string `json:"run_id"`
				Data  struct {
					Success *bool `json:"success"`
				} `json:"data"`
			}
			if err := json.Unmarshal(line, &l); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			if l.Type != "action" {
				continue
			}
			c := got[sessionOf[l.RunID]]
			c.calls++
			if l.Data.Success != nil && !*l.Data.Success {
				c.failed++
			}
			got[sessionOf[l.RunID]] = c
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: %d actions, %d unsuccessful; the map has %d calls, %d failed", id, got[id].calls, got[id].failed, w.calls, w.failed)
			}
		}
	})

	t.Run("agentscope", func(t *testing.T) {
		var doc struct {
			Runs []agentscope.Run `json:"runs"`
		}
		if err := json.Unmarshal(exported(export.AgentScope), &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Runs {
			n := 0
			for _, a := range r.Actions {
				if a.Type != "generate_summary" {
					n++
				}
			}
			if n != want[r.ID].calls {
				t.Errorf("%s: %d actions besides summaries; the map has %d calls", r.ID, n, want[r.ID].calls)
			}
		}
		if len(doc.Runs) != len(want) {
			t.Errorf("%d runs, %d maps", len(doc.Runs), len(want))
		}
	})
}

// TestExportJSONLContentHash pins what docs/exports.md says of the jsonl
// format: contentHash is the SHA-256 of the line's map without contentHash
// and session.cliVersion, in canonical JSON (not of the line itself), in
// every path mode, and the check the page gives (run when python3 is
// installed) finds every line of the corpus's export correct.
func TestExportJSONLContentHash(t *testing.T) {
	data, built := corpusStore(t, builder.Options{Producer: "agentmap test"})
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "exports.md"))
	if err != nil {
		t.Fatal(err)
	}
	check := docBlock(t, string(page), "## jsonl", "```sh")
	for _, mode := range []string{"relative", "hashed"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "maps.jsonl")
			var stdout, stderr bytes.Buffer
			args := []string{"--format", "jsonl", "--data-dir", data, "--out", target, "--path-mode", mode}
			if code := cmdExport(context.Background(), args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
			if len(lines) != len(built) {
				t.Fatalf("%d lines, %d maps", len(lines), len(built))
			}
			for i, line := range lines {
				dec := json.NewDecoder(bytes.NewReader(line))
				dec.UseNumber()
				var m map[string]any
				if err := dec.Decode(&m); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				want, _ := m["contentHash"].(string)
				delete(m, "contentHash")
				delete(m["session"].(map[string]any), "cliVersion")
				canon, err := builder.CanonicalJSON(m)
				if err != nil {
					t.Fatal(err)
				}
				if sum := sha256.Sum256(canon); hex.EncodeToString(sum[:]) != want {
					t.Errorf("line %d: contentHash %s is not the SHA-256 of the map without contentHash and session.cliVersion", i+1, want)
				}
			}
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 not installed: the page's check is not run")
			}
			cmd := exec.Command("sh", "-c", check)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the page's check: %v\n%s", err, out)
			}
			if got := strings.Count(string(out), " ok\n"); got != len(built) || strings.Contains(string(out), "MISMATCH") {
				t.Errorf("the page's check: %d of %d maps ok:\n%s", got, len(built), out)
			}
		})
	}
}

// docBlock is the first fenced block opened by fence in the section of a
// Markdown page under heading.
func docBlock(t *testing.T, page, heading, fence string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n"+heading)
	if ok {
		rest, _, _ = strings.Cut(rest, "\n## ")
		_, rest, ok = strings.Cut(rest, "\n"+fence+"\n")
	}
	if ok {
		rest, _, ok = strings.Cut(rest, "\n```\n")
	}
	if !ok {
		t.Fatalf("no %s block under %q", fence, heading)
	}
	return rest
}
