package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
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

// cutAtCopy is a TCP proxy to the server that cuts both ends of a
// connection when its client starts sending the rows of a COPY (a
// CopyData message): the network going away mid-push. It returns the
// proxy's address.
func cutAtCopy(t *testing.T, server string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(c, s); c.Close() }()
			go func() {
				defer s.Close()
				defer c.Close()
				// The startup message (sslmode=disable: no SSL request
				// first) has no type byte; every message after it has one.
				var head [5]byte
				if _, err := io.ReadFull(c, head[:4]); err != nil {
					return
				}
				n := int(binary.BigEndian.Uint32(head[:4]))
				body := make([]byte, n-4)
				if _, err := io.ReadFull(c, body); err != nil {
					return
				}
				s.Write(append(head[:4:4], body...))
				for {
					if _, err := io.ReadFull(c, head[:]); err != nil {
						return
					}
					if head[0] == 'd' {
						return // cut
					}
					n := int(binary.BigEndian.Uint32(head[1:]))
					body := make([]byte, n-4)
					if _, err := io.ReadFull(c, body); err != nil {
						return
					}
					if _, err := s.Write(append(head[:], body...)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestConnectionCutMidCopySaysSoInWords: a connection cut while a push
// sends its events (pgx's "unexpected EOF") is told as a lost connection
// in words, as the database out of reach (not a refusal), in the error and
// in the sink's state, and the batch stays queued.
func TestConnectionCutMidCopySaysSoInWords(t *testing.T) {
	srv, pool := newDB(t)
	db := pgtest.Database(pool.Config().ConnString())
	proxy := cutAtCopy(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)))
	u, err := url.Parse(srv.AdminURL(db))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = proxy
	ctx := context.Background()
	cut, err := Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	_, err = Push(ctx, cut, Device{ID: "7b6f3a4e-c0c0-4222-8333-444455556666"}, []Upload{{Doc: fixture(t, "claude_session"), FlushedAt: time.Now()}})
	t.Logf("push cut mid-COPY: %v", err)
	if err == nil || Refused(err) || !strings.Contains(err.Error(), "store events: the connection to the server was lost") ||
		strings.Contains(err.Error(), "EOF") {
		t.Fatalf("push cut mid-COPY: %v", err)
	}
	sdb, maps := storeFixtures(t, true)
	s, err := NewSender(sdb.Outbox(Name), maps, Config{URL: u.String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Drain(ctx); err == nil {
		t.Fatal("a drain cut mid-COPY succeeded")
	}
	if st, _ := sdb.Outbox(Name).Stats(); st.Len != 3 || st.State.Failures != 1 ||
		!strings.Contains(st.State.LastError, "the connection to the server was lost") || strings.Contains(st.State.LastError, "EOF") {
		t.Fatalf("the sink's state after a drain cut mid-COPY: %+v", st)
	}
}
