package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/report"
)

// report reads a store of more maps than one batch of pages (pageBatch)
// into the page report.Write makes of the maps held all at once: the
// same overview and session pages, and its count of sessions.
func TestReportOfMoreMapsThanABatch(t *testing.T) {
	home := emptyHome(t)
	log, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	const id = "0a1b2c3d-0000-4000-8000-000000000001"
	n := pageBatch + 44
	for i := range n {
		dir := filepath.Join(home, ".claude", "projects", fmt.Sprintf("-w-app%d", i%7))
		os.MkdirAll(dir, 0o700)
		sid := fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", i+2)
		// Each session starts a minute after the last, so that the
		// overview's order is not the order of the files.
		day := strings.ReplaceAll(string(log), id, sid)
		day = strings.ReplaceAll(day, "2026-05-01T10:", fmt.Sprintf("2026-05-%02dT%02d:", 1+i%27, i%24))
		os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(day), 0o600)
	}
	data := filepath.Join(home, "data")
	if code, _, errOut := runCmd(cmdScan, "--data-dir", data); code != exitOK {
		t.Fatalf("scan: %d %s", code, errOut)
	}
	out := filepath.Join(home, "report.html")
	code, _, errOut := runCmd(cmdReport, "--data-dir", data, "-o", out)
	if code != exitOK || !strings.Contains(errOut, fmt.Sprintf("%d sessions", n)) {
		t.Fatalf("report: %d %s", code, errOut)
	}
	maps, errs := report.Collect(t.Context(), report.Dir(filepath.Join(data, "maps")), report.Filter{})
	if len(errs) > 0 || len(maps) != n {
		t.Fatalf("%d maps, %v", len(maps), errs)
	}
	var whole bytes.Buffer
	if err := report.Write(&whole, maps, report.Options{Scope: "x"}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	got, err := report.Unpack(page)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := report.Unpack(whole.Bytes())
	if len(got) != n+1 || len(want) != n+1 {
		t.Fatalf("%d and %d documents, want %d", len(got), len(want), n+1)
	}
	generated := regexp.MustCompile(`"generated":"[^"]*"`)
	for i := range got {
		if g, w := generated.ReplaceAll(got[i], nil), generated.ReplaceAll(want[i], nil); !bytes.Equal(g, w) {
			t.Fatalf("document %d differs from the page of the maps held at once", i)
		}
	}
}
