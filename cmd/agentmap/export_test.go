package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/export/mapfile"
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
