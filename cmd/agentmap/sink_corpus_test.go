package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/sink/postgres"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
	"github.com/agentmap/agentmap/watchers/agents"
)

// TestCorpusTeamDatabase pushes the corpus from three simulated machines
// (separate data dirs, device ids, path modes and agents) into one real
// PostgreSQL server: the database holds every local map once, its totals
// are the sums of the local ones, a second scan sends nothing, the reader
// gives the maps back, and no text of the logs is in any table.
func TestCorpusTeamDatabase(t *testing.T) {
	corpus := corpusDir(t)
	srv := pgtest.New(t)
	db := pgtest.Database(srv.NewDatabase(t))
	t.Setenv(passwordEnv, srv.Password())
	home := privateHome(t)
	roots := layoutCorpus(t, corpus, home, false)
	var noCursor []string
	for i := 0; i+1 < len(roots); i += 2 {
		if !strings.HasPrefix(roots[i+1], "cursor") {
			noCursor = append(noCursor, roots[i], roots[i+1])
		}
	}
	teamKey := filepath.Join(t.TempDir(), "team.key")
	os.WriteFile(teamKey, []byte("00112233445566778899aabbccddeeff"), 0o600)
	ms := []*machine{
		newMachine(t, srv, db, "alice-laptop", "", ""),
		newMachine(t, srv, db, "bob-desktop", "[agents.cursor]\nenabled = false\n",
			"path_mode = \"hashed\"\nhash_key_file = \""+teamKey+"\"\n"),
		newMachine(t, srv, db, "carol-vm", "[maps]\npath_mode = \"dirs_only\"\n", "batch = 7\n"),
	}
	for i, m := range ms {
		r := roots
		if i == 1 {
			r = noCursor
		}
		code, _, stderr := run(t, append([]string{"scan", "--config", m.config}, r...)...)
		if code != exitOK {
			t.Fatalf("scan of %s: exit %d\n%s", m.name, code, stderr)
		}
		if st := m.deviceID(t); st.Queue != 0 || st.Sent == 0 || st.LastError != "" {
			t.Fatalf("%s after its scan: %+v", m.name, st)
		}
	}
	pool := openTeam(t, srv, db)
	checkTeamEqualsLocal(t, pool, ms)
	checkFailingVerbsEqualReport(t, srv.AdminURL(db), pool)
	var modes []string
	if err := pool.QueryRow(context.Background(), "SELECT array_agg(DISTINCT path_mode ORDER BY path_mode) FROM agentmap.sessions").Scan(&modes); err != nil {
		t.Fatal(err)
	}
	if strings.Join(modes, ",") != "dirs_only,hashed,relative" {
		t.Errorf("path modes in the team database: %v", modes)
	}

	// Scanning again sends nothing: no row is written twice.
	var last time.Time
	pool.QueryRow(context.Background(), "SELECT max(received_at) FROM agentmap.sessions").Scan(&last)
	sent := ms[0].deviceID(t).Sent
	if code, _, stderr := run(t, append([]string{"scan", "--config", ms[0].config}, roots...)...); code != exitOK {
		t.Fatalf("second scan: %s", stderr)
	}
	var again time.Time
	pool.QueryRow(context.Background(), "SELECT max(received_at) FROM agentmap.sessions").Scan(&again)
	if st := ms[0].deviceID(t); st.Sent != sent || !again.Equal(last) {
		t.Fatalf("a second scan sent again: sent %d → %d, last row %s → %s", sent, st.Sent, last, again)
	}
	checkTeamEqualsLocal(t, pool, ms)

	// A pattern added to one machine's config: the sessions it covers
	// leave its store at its next scan, and the team database with them.
	cwd := ""
	filepath.WalkDir(home, func(p string, e os.DirEntry, err error) error {
		if err == nil && cwd == "" && !e.IsDir() && strings.HasSuffix(p, ".jsonl") {
			cwd, _ = agents.SniffCWD(p)
		}
		return nil
	})
	if cwd == "" {
		t.Fatal("no log of the corpus names a working directory")
	}
	before := len(ms[0].localSessions(t, ""))
	cfg, _ := os.ReadFile(ms[0].config)
	cfg = bytes.Replace(cfg, []byte("[sink.postgres]"), []byte(fmt.Sprintf("[privacy]\nexclude = [%q]\n[sink.postgres]", filepath.ToSlash(cwd))), 1)
	if err := os.WriteFile(ms[0].config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, append([]string{"scan", "--config", ms[0].config}, roots...)...); code != exitOK {
		t.Fatalf("scan with the pattern: %s", stderr)
	}
	st := ms[0].deviceID(t)
	after := len(ms[0].localSessions(t, ""))
	if after >= before || st.Queue != 0 || st.LastError != "" || st.Retracted == 0 || st.Retracted > uint64(before-after) {
		t.Fatalf("after the pattern: %d sessions kept of %d, sink %+v", after, before, st)
	}
	checkTeamEqualsLocal(t, pool, ms)

	// The reader gives back each machine's maps, filtered by device.
	var hay haystack
	for _, m := range ms {
		n := 0
		err := postgres.ReadPool(context.Background(), pool, postgres.Filter{Devices: []string{m.name}}, func(s postgres.Stored) error {
			n++
			hay.add("team map of "+m.name, s.Map)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if local := len(m.localSessions(t, "")); n != local {
			t.Errorf("reader: %d maps of %s, %d local", n, m.name, local)
		}
		_, out, errb := run(t, "sink", "status", "--data-dir", m.dataDir)
		hay.add("sink status of "+m.name, []byte(out+errb))
	}

	// The privacy audit: every table, as pg_dump writes it.
	dump, err := srv.Dump(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dump, []byte("COPY agentmap.events")) {
		t.Fatal("the dump holds no events table")
	}
	hay.add("pg_dump of the team database", dump)
	// COPY doubles backslashes: the JSON in the map column is searched
	// again with them undone, so an escaped quote cannot hide a needle.
	hay.add("pg_dump of the team database (unescaped)", bytes.ReplaceAll(dump, []byte(`\\`), []byte(`\`)))
	agents := []string{"claude", "codex", "cursor"}
	findLeaks(t, &hay, agents, corpusNeedles(t, agents))
}
