package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// TestOpenSendsTheServerNothingItWouldQuote: pgx sends a key it does not
// know to the server as a run-time parameter, and the server's refusal
// quotes it, or its value: a URL pasted after key=value pairs (or after a
// space) reached the log as `unrecognized configuration parameter
// "postgres://u:SECRETPW@h/db?sslmode"`. Open refuses such a string, and
// any run-time parameter but application_name, before it connects, in
// words that quote nothing of it; the daemon's status and log show none of
// it either.
func TestOpenSendsTheServerNothingItWouldQuote(t *testing.T) {
	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	ctx := context.Background()
	pw := srv.Password()
	base := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable", srv.Port, pgtest.Admin, pw, db)
	for _, url := range []string{
		base + " postgres://u:SECRETPW@h/db?sslmode=disable",
		base + " work_mem=SECRETPW",
		base + " search_path=SECRETPW",
		base + " options=-cwork_mem=SECRETPW",
		" " + srv.URL(pgtest.Admin, pw, db) + "&x=SECRETPW",
		srv.URL(pgtest.Admin, pw, db) + "&work_mem=SECRETPW",
		srv.URL(pgtest.Admin, pw, db) + "&ssl=SECRETPW",
	} {
		pool, err := Open(ctx, url)
		if err == nil {
			pool.Close()
			t.Errorf("Open of a string with a parameter for the server: no error")
			continue
		}
		t.Logf("refused: %v", err)
		if strings.Contains(err.Error(), "SECRETPW") || strings.Contains(err.Error(), pw) {
			t.Errorf("Open's error quotes the string: %v", err)
		}
	}
	// A libpq keyword pgx does not read itself is named: it is no secret.
	if _, err := Open(ctx, base+" hostaddr=127.0.0.1"); err == nil || !strings.Contains(err.Error(), "sets hostaddr") {
		t.Errorf("hostaddr: %v", err)
	}
	// application_name goes to the server, which takes any value.
	pool, err := Open(ctx, base+" application_name='agentmap laptop'")
	if err != nil {
		t.Fatal(err)
	}
	var name string
	if err := pool.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&name); err != nil || name != "agentmap laptop" {
		t.Fatalf("application_name: %q %v", name, err)
	}
	pool.Close()

	// A daemon with such a URL: its status and its log quote none of it.
	sdb, maps := storeFixtures(t, true)
	var logs syncBuffer
	s, err := NewSender(sdb.Outbox(Name), maps, Config{URL: base + " postgres://u:SECRETPW@h/db?sslmode=disable"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.Run(rctx); close(done) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "queue waits") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	st, _ := sdb.Outbox(Name).Stats()
	if st.Len != 3 || st.State.LastError == "" {
		t.Fatalf("after the refused start: %+v\n%s", st, logs.String())
	}
	if out := logs.String() + st.State.LastError; strings.Contains(out, "SECRETPW") || strings.Contains(out, pw) {
		t.Fatalf("the daemon's status or log quotes the URL:\n%s", out)
	}
}

// TestConnectErrorsQuoteNothing: pgx reads a URL as libpq does, so an @ or
// a / not percent-encoded in the password makes a host, a port or a
// database of pieces of it, which pgx's connection error quotes ("lookup
// ss@127.0.0.1", "database=abcd@127.0.0.1:1/db"). Open refuses such a URL,
// and says why any connection failed in words of its own, naming the
// database, hosts and user of a string it reads as meant.
func TestConnectErrorsQuoteNothing(t *testing.T) {
	ctx := context.Background()
	for url, pieces := range map[string][]string{
		"postgres://agentmap:1234/abcd@127.0.0.1:1/db?connect_timeout=2": {"1234", "abcd"},
		"postgres://agentmap:pa@ss@127.0.0.1:1/db?connect_timeout=2":     {"pa@", "ss@"},
		"postgres://u:/xyz@127.0.0.1:1/db?connect_timeout=2":             {"/xyz", "xyz@"},
		"postgres://u:pw@127.0.0.1:1/SECRET%20db?connect_timeout=2":      {}, // well formed: the database may be named
	} {
		_, err := Open(ctx, url)
		if err == nil {
			t.Fatalf("Open(%q) connected", url)
		}
		t.Logf("%v", err)
		for _, p := range pieces {
			if strings.Contains(err.Error(), p) {
				t.Errorf("Open's error shows %q of the password: %v", p, err)
			}
		}
		if strings.Contains(err.Error(), "failed to connect to") || strings.Contains(err.Error(), "lookup") {
			t.Errorf("Open passes pgx's error on: %v", err)
		}
	}
	if _, err := Open(ctx, "postgres://u:pw@127.0.0.1:1/db?connect_timeout=2"); err == nil ||
		err.Error() != "connect to the team database db on 127.0.0.1:1 as u: connection refused (is the server running there, on that port?)" {
		t.Errorf("a port nothing listens on: %v", err)
	}

	srv := pgtest.Shared(t)
	db := pgtest.Database(srv.NewDatabase(t))
	for _, c := range []struct{ url, code, want string }{
		{srv.URL(pgtest.Admin, "not-the-password", db), "28P01",
			fmt.Sprintf("connect to the team database %s on 127.0.0.1:%d as %s: server error 28P01 (password authentication failed)", db, srv.Port, pgtest.Admin)},
		{srv.URL(pgtest.Admin, srv.Password(), "no_such_db"), "3D000",
			fmt.Sprintf("connect to the team database no_such_db on 127.0.0.1:%d as %s: server error 3D000 (the database does not exist)", srv.Port, pgtest.Admin)},
	} {
		_, err := Open(ctx, c.url)
		var se *ServerError
		if err == nil || err.Error() != c.want || !errors.As(err, &se) || se.Code != c.code || !Refused(err) {
			t.Errorf("Open: %v, want %q", err, c.want)
		}
	}
}

// A string connstr takes but pgx cannot make a configuration of is said in
// words that help, and none of its text.
func TestOpenSaysWhyAStringDoesNotParse(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "root.crt")
	for url, want := range map[string]string{
		"postgres://u:SECRETPW@h/db?sslmode=verify-full&sslrootcert=" + missing: "the team database URL names a file that cannot be read: " + missing + ": no such file or directory",
		"host=h user=u password=SECRETPW sslmode=requir":                        "the team database URL's sslmode is none of disable, allow, prefer, require, verify-ca, verify-full",
		"service=nosuchservice password=SECRETPW":                               "the team database URL names a service that cannot be read from the service file (PGSERVICEFILE, ~/.pg_service.conf)",
		"host=h user=u password=SECRETPW connect_timeout=abc":                   "the team database URL's connect_timeout is not a whole number of seconds",
		"postgres://u:SECRETPW@h/db?pool_max_conns=many":                        "the team database URL's pool_max_conns is not a whole number",
		"postgres://u:SECRETPW@h/db?pool_max_conn_lifetime=1day":                "the team database URL's pool_max_conn_lifetime is not a duration (such as 1h30m)",
	} {
		_, err := Open(ctx, url)
		if err == nil || err.Error() != want || strings.Contains(err.Error(), "SECRETPW") {
			t.Errorf("Open: %v, want %q", err, want)
		}
	}
}
