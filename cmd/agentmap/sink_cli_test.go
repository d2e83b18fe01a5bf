package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// TestSinkMigrateFindsADamagedSchema: `sink migrate` on a schema at its
// version but with a table dropped names the table and exits 1, and says
// the version again once the table is back.
func TestSinkMigrateFindsADamagedSchema(t *testing.T) {
	srv := pgtest.New(t)
	db := pgtest.Database(srv.NewDatabase(t))
	t.Setenv(passwordEnv, srv.Password())
	m := newMachine(t, srv, db, "owner", "", "")
	if code, out, errb := run(t, "sink", "migrate", "--config", m.config); code != exitOK || !strings.Contains(out, "schema at version") {
		t.Fatalf("first migrate: exit %d\n%s%s", code, out, errb)
	}
	pool := openTeam(t, srv, db)
	if _, err := pool.Exec(context.Background(), "DROP TABLE agentmap.files"); err != nil {
		t.Fatal(err)
	}
	code, out, errb := run(t, "sink", "migrate", "--config", m.config)
	if code != exitFailure || strings.Contains(out, "schema at version") || !strings.Contains(errb, "agentmap.files is missing") {
		t.Fatalf("migrate of a schema without agentmap.files: exit %d\n%s%s", code, out, errb)
	}
	if strings.Contains(out+errb, srv.Password()) {
		t.Fatal("migrate shows the password")
	}
}

// TestSinkStatusOfAMissingDataDir: a data directory named by --data-dir
// that does not exist is an error, as every command that reads the store
// says it; the config's data_dir, or the default one, not there yet is a
// machine where no daemon has run, which sink status says as status does,
// exit 0.
func TestSinkStatusOfAMissingDataDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, args := range [][]string{{"sink", "status", "--data-dir", missing}, {"sink", "status", "--json", "--data-dir", missing}} {
		code, out, errb := run(t, args...)
		if code != exitFailure || out != "" || !strings.Contains(errb, "agentmap sink status: --data-dir "+missing+": no such directory") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errb)
		}
	}
	cfg := filepath.Join(t.TempDir(), "agentmap.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n", filepath.ToSlash(missing))), 0o600)
	emptyHome(t) // the default data directory is under it, not there
	for _, tc := range []struct {
		args []string
		dir  string
	}{{[]string{"status", "--no-service", "--config", cfg}, missing}, {[]string{"sink", "status", "--config", cfg}, missing}, {[]string{"sink", "status"}, config.Default().DataDir}} {
		code, out, errb := run(t, tc.args...)
		if code != exitOK || errb != "" || !strings.Contains(out, "no state in "+tc.dir+" yet") {
			t.Errorf("%v: exit %d\n%s%s", tc.args, code, out, errb)
		}
	}
	code, out, errb := run(t, "sink", "status", "--json", "--config", cfg)
	if code != exitOK || strings.Join(strings.Fields(out), "") != `{"configured":false}` {
		t.Errorf("sink status --json of a data directory not there yet: exit %d\n%s%s", code, out, errb)
	}
	// A data directory with no state yet is not an error, and says so.
	code, out, errb = run(t, "sink", "status", "--data-dir", t.TempDir())
	if code != exitOK || !strings.Contains(out, "no state in") {
		t.Errorf("sink status of an empty data directory: exit %d\n%s%s", code, out, errb)
	}
	// In JSON: an object that says no sink is configured, not a bare null.
	code, out, errb = run(t, "sink", "status", "--json", "--data-dir", t.TempDir())
	if code != exitOK || strings.Join(strings.Fields(out), "") != `{"configured":false}` {
		t.Errorf("sink status --json without a sink: exit %d\n%s%s", code, out, errb)
	}
}

// TestSinkStatusCountsFailedAttempts: one failed attempt is singular; a
// running daemon's sender retries, without one nothing does until the next
// scan or start.
func TestSinkStatusCountsFailedAttempts(t *testing.T) {
	for n, want := range map[int]string{1: "(1 failed attempt; retrying with back-off)", 2: "(2 failed attempts in a row; retrying with back-off)"} {
		var b strings.Builder
		writeSinkStatus(&b, &daemon.SinkStatus{DeviceID: "dev", LastError: "connect: refused", Failures: n, Sending: true})
		if !strings.Contains(b.String(), want) {
			t.Errorf("%d failures: %q, want %q", n, b.String(), want)
		}
	}
	var b strings.Builder
	writeSinkStatus(&b, &daemon.SinkStatus{DeviceID: "dev", LastError: "connect: refused", Failures: 2})
	if want := "(2 failed attempts in a row; no daemon is sending: tried again at the next agentmap scan, or when the daemon starts)"; !strings.Contains(b.String(), want) {
		t.Errorf("failures with no daemon sending: %q, want %q", b.String(), want)
	}
}
