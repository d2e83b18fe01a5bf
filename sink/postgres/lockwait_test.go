package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestReadWaitsForALockABoundedTime: a read of a table another session
// holds locked (a migration, a maintenance ALTER) ends after readLockWait
// with an error saying so, rather than hold `usage --from` without a word
// for as long as the lock is held.
func TestReadWaitsForALockABoundedTime(t *testing.T) {
	_, pool := newDB(t)
	ctx := context.Background()
	was := readLockWait
	readLockWait = 300 * time.Millisecond
	t.Cleanup(func() { readLockWait = was })
	holder := lockSessions(t, pool)
	defer holder.Rollback(ctx)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	err := ReadPool(rctx, pool, Filter{}, func(Stored) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "another session held a table of the team database locked") || rctx.Err() != nil {
		t.Fatalf("a read of a locked table after %s: %v", time.Since(start), err)
	}
	holder.Rollback(ctx)
	if err := ReadPool(ctx, pool, Filter{}, func(Stored) error { return nil }); err != nil {
		t.Fatalf("a read once the lock is gone: %v", err)
	}
}

// TestStoppedPushIsNoFailedAttempt: a push the daemon's end cancels (here
// held up by a lock) is not recorded as an attempt that failed: the sink's
// status keeps no error of it, and the batch stays queued.
func TestStoppedPushIsNoFailedAttempt(t *testing.T) {
	_, pool := newDB(t)
	db, maps := storeFixtures(t, false)
	ctx := context.Background()
	s, err := NewSender(db.Outbox(Name), maps, Config{URL: pool.Config().ConnString(), Label: "lab"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	holder := lockSessions(t, pool)
	defer holder.Rollback(ctx)
	dctx, stop := context.WithTimeout(ctx, 500*time.Millisecond)
	defer stop()
	if err := s.Drain(dctx); err == nil {
		t.Fatal("a push held up by a lock and stopped reports no error")
	}
	st, err := db.Outbox(Name).Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.State.Failures != 0 || st.State.LastError != "" || st.Len == 0 {
		t.Errorf("after a stopped push: %d failures, last error %q, %d queued", st.State.Failures, st.State.LastError, st.Len)
	}
}

// lockSessions holds the sessions table locked, as a migration or a
// maintenance ALTER does, until the transaction it returns ends.
func lockSessions(t *testing.T, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "LOCK TABLE agentmap.sessions IN ACCESS EXCLUSIVE MODE"); err != nil {
		holder.Rollback(ctx)
		t.Fatal(err)
	}
	return holder
}
