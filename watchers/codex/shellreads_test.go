package codex

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
)

// TestShellReadsInMap builds the parsed_cmd fixture into a map: every file
// a shell command read is in files[] with its reads counted, the listed and
// searched directory is a hit, two failed reads of different files are not
// retries of each other, a repeat of the same read is, and cache writes
// are cw, not fresh input.
func TestShellReadsInMap(t *testing.T) {
	res := parseFile(t, filepath.Join(fixtureDir(t), "rollout-2026-11-20T09-00-00-0190dddd-0000-7000-8000-00000000d011.jsonl"))
	m, err := builder.Build(res.events, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Path  string `json:"path"`
			Reads int    `json:"reads"`
			Hits  int    `json:"hits"`
		} `json:"files"`
		Events []struct {
			Kind    string `json:"kind"`
			Seq     int    `json:"seq"`
			RetryOf *int   `json:"retryOf"`
			Targets []struct {
				File  *int   `json:"file"`
				Touch string `json:"touch"`
			} `json:"targets"`
			In int64 `json:"in"`
			CW int64 `json:"cw"`
			CR int64 `json:"cr"`
		} `json:"events"`
		Totals struct {
			Retries int     `json:"retries"`
			Cost    float64 `json:"costUsd"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	files := map[string][2]int{}
	for _, f := range doc.Files {
		files[f.Path] = [2]int{f.Reads, f.Hits}
	}
	want := map[string][2]int{"src/a.go": {1, 0}, "src/b.go": {2, 0}, "src": {0, 2}}
	for p, w := range want {
		if files[p] != w {
			t.Errorf("files[%s] = reads/hits %v, want %v (files %+v)", p, files[p], w, doc.Files)
		}
	}
	var execs, retries []int
	var in, cw, cr int64
	for _, e := range doc.Events {
		switch e.Kind {
		case "exec":
			execs = append(execs, e.Seq)
			if e.RetryOf != nil {
				retries = append(retries, *e.RetryOf)
			}
		case "llm":
			in, cw, cr = in+e.In, cw+e.CW, cr+e.CR
		}
	}
	// The third command (cat src/b.go again) repeats the second, not the
	// first (cat src/a.go).
	if len(execs) != 5 || len(retries) != 1 || retries[0] != execs[1] || doc.Totals.Retries != 1 {
		t.Errorf("execs %v, retryOf %v, totals.retries %d", execs, retries, doc.Totals.Retries)
	}
	if in != 2000 || cw != 12300 || cr != 35000 {
		t.Errorf("tokens in/cw/cr = %d/%d/%d, want 2000/12300/35000", in, cw, cr)
	}
	// gpt-5.5 at $5 in, $5 cache write, $0.50 read, $30 out.
	if want := (2000*5.0 + 12300*5 + 35000*0.5 + 870*30) / 1e6; doc.Totals.Cost < want-1e-6 || doc.Totals.Cost > want+1e-6 {
		t.Errorf("cost %v, want %v", doc.Totals.Cost, want)
	}
}
