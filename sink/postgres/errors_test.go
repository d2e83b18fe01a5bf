package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/sink/postgres/pgtest"
)

// TestErrorsOfBeginAndCommitAreTheServers: a push's transaction fails at
// BEGIN when the pool has to connect again and the server refuses (a
// password changed meanwhile), or at COMMIT (a deferred constraint, a
// serialization failure): those errors are the server's, kept as a
// ServerError (SQLSTATE and message, no detail) and told as refusals or
// conflicts as any other, never passed on as pgx's text under "cannot
// reach". A conflict (SQLSTATE class 40) is not a refusal: the next
// attempt passes.
func TestErrorsOfBeginAndCommitAreTheServers(t *testing.T) {
	srv, pool := newDB(t)
	ctx := context.Background()
	db := pgtest.Database(pool.Config().ConnString())
	role := uniqueRole("pusher")
	if out, err := srv.Psql(db, "CREATE ROLE "+role+" LOGIN SUPERUSER PASSWORD 'pw-before'"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	rp, err := Open(ctx, srv.URL(role, "pw-before", db))
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	dev := Device{ID: "7b6f3a4e-ffff-4222-8333-444455556666"}
	d := fixture(t, "claude_session")
	if _, err := Push(ctx, rp, dev, []Upload{{Doc: d, FlushedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}

	// BEGIN: the password changed, the pool connects again.
	if out, err := srv.Psql(db, "ALTER ROLE "+role+" PASSWORD 'pw-after'"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	rp.Reset()
	_, err = Push(ctx, rp, dev, []Upload{{Doc: d, FlushedAt: time.Now()}})
	t.Logf("push after the password changed: %v", err)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "28P01" || !Refused(err) || !strings.Contains(err.Error(), "push: begin: connect") ||
		strings.Contains(err.Error(), "failed to connect") || strings.Contains(err.Error(), "pw-before") {
		t.Fatalf("push after the password changed: %v", err)
	}

	// COMMIT: a deferred constraint fails there.
	if out, err := srv.Psql(db, `CREATE FUNCTION agentmap.no_more() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'no more sessions' USING ERRCODE = '23514', DETAIL = 'a detail that quotes a row'; END $$;
		CREATE CONSTRAINT TRIGGER no_more AFTER INSERT OR UPDATE ON agentmap.sessions
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agentmap.no_more()`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, err = Push(ctx, pool, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(time.Minute)}})
	t.Logf("push refused at commit: %v", err)
	if !errors.As(err, &se) || se.Code != "23514" || !Refused(err) || !strings.Contains(err.Error(), "push: commit") ||
		strings.Contains(err.Error(), "quotes a row") {
		t.Fatalf("push refused at commit: %v", err)
	}

	// A serialization failure, at commit or before it, is a conflict.
	if out, err := srv.Psql(db, `CREATE OR REPLACE FUNCTION agentmap.no_more() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END $$`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, err = Push(ctx, pool, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(2 * time.Minute)}})
	if !errors.As(err, &se) || se.Code != "40001" || Refused(err) || !conflict(err) {
		t.Fatalf("push rolled back by a serialization failure: %v", err)
	}
	if out, err := srv.Psql(db, `DROP TRIGGER no_more ON agentmap.sessions;
		CREATE TRIGGER no_more AFTER INSERT OR UPDATE ON agentmap.sessions FOR EACH ROW EXECUTE FUNCTION agentmap.no_more()`); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, err = Push(ctx, pool, dev, []Upload{{Doc: d, FlushedAt: time.Now().Add(3 * time.Minute)}})
	if !errors.As(err, &se) || se.Code != "40001" || Refused(err) || !conflict(err) {
		t.Fatalf("push rolled back by a serialization failure: %v", err)
	}
}
