package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// TestReportAndUsageFromTeamDatabase: usage and report over the team
// database are the same as over the same maps on disk, and --device and
// --repo choose what they say.
func TestReportAndUsageFromTeamDatabase(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	names := []string{"claude_session", "codex_session", "cursor_transcript"}
	all, alice := t.TempDir(), t.TempDir()
	var docs []postgres.Upload
	for i, n := range names {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "builder", n+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(all, n+".json"), raw, 0o600)
		if i < 2 {
			os.WriteFile(filepath.Join(alice, n+".json"), raw, 0o600)
		}
		d, err := mapfile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, postgres.Upload{Doc: d, FlushedAt: time.Now()})
	}
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-000000000001", Label: "alice"}, docs[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Push(ctx, pool, postgres.Device{ID: "0a0a0a0a-0000-4000-8000-000000000002", Label: "bob"}, docs[2:]); err != nil {
		t.Fatal(err)
	}
	usage := func(args ...string) string {
		t.Helper()
		code, out, errb := run(t, append([]string{"usage", "session", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("usage %v: exit %d\n%s", args, code, errb)
		}
		return out
	}
	if team, local := usage("--from", url), usage("--maps", all); team != local {
		t.Errorf("usage of the team database differs from the same maps on disk:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--device", "alice"), usage("--maps", alice); team != local {
		t.Errorf("usage --device alice:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--repo", "api"), usage("--maps", all, "--repo", "api"); team != local || !strings.Contains(team, "claude") {
		t.Errorf("usage --repo api:\n%s\nwant\n%s", team, local)
	}
	if team, local := usage("--from", url, "--repo", "s*"), usage("--maps", all, "--repo", "s*"); team != local {
		t.Errorf("usage --repo s*:\n%s\nwant\n%s", team, local)
	}
	out := filepath.Join(t.TempDir(), "team.html")
	code, _, errb := run(t, "report", "--from", url, "--device", "bob,alice", "-o", out)
	if code != exitOK || !strings.Contains(errb, "3 sessions") {
		t.Fatalf("report --from: exit %d\n%s", code, errb)
	}
	html, _ := os.ReadFile(out)
	if strings.Contains(string(html), srv.Password()) || strings.Contains(errb, srv.Password()) {
		t.Fatal("the report shows the database password")
	}
	if code, _, errb := run(t, "usage", "--device", "bob"); code != exitUsage {
		t.Fatalf("--device without --from: exit %d %s", code, errb)
	}
}
