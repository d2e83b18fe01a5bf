package state

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/scribble"
	bolt "go.etcd.io/bbolt"
)

// A panic in a read's own function (a fault reading a damaged record, a
// bug of ours) is that read's error alone; one in a write's function, or
// one of bbolt's own,
// beginning a transaction on meta pages damaged under the open database,
// makes it unusable: every later transaction, the sinks' queue's too,
// fails at once instead of waiting for ever on the locks bbolt kept, and
// Close returns.
func TestPanicOfBboltMakesTheDatabaseUnusable(t *testing.T) {
	d, path := openTemp(t)
	commitSessions(t, d, 10)
	err := d.view(func(*bolt.Tx) error {
		var m map[string]int
		m["x"]++ // a bug in the function: a nil map write
		return nil
	})
	if !errors.Is(err, ErrDamaged) || d.Unusable() != nil {
		t.Fatalf("a panic in the function: %v, unusable %v", err, d.Unusable())
	}
	if _, err := d.Sources([]uint64{1}); err != nil {
		t.Fatalf("a read after a panic in a function: %v", err)
	}
	// In a write's function: the tree written to is damaged, and a
	// repair (a write) would meet it again.
	w, _ := openTemp(t)
	err = w.update(func(*bolt.Tx) error { panic("assertion failed: Page expected to be: 120") })
	if !errors.Is(err, ErrDamaged) || !errors.Is(w.Unusable(), ErrUnusable) {
		t.Fatalf("a panic in a write's function: %v, unusable %v", err, w.Unusable())
	}
	if err := w.PutSessions(&Session{Key: "claude/x", Agent: "claude"}); !errors.Is(err, ErrUnusable) {
		t.Errorf("a write after: %v", err)
	}
	if err := scribble.Over(path, 0, 2*4096); err != nil { // both meta pages
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := d.Sources([]uint64{1}); !errors.Is(err, ErrDamaged) {
			t.Errorf("a read on damaged meta pages: %v", err)
		}
		select {
		case <-d.Failed():
		default:
			t.Error("Failed not closed")
		}
		if err := d.Unusable(); !errors.Is(err, ErrUnusable) {
			t.Errorf("Unusable: %v", err)
		}
		if _, err := d.Sources([]uint64{1}); !errors.Is(err, ErrUnusable) {
			t.Errorf("a read after: %v", err)
		}
		if err := d.PutSessions(&Session{Key: "claude/x", Agent: "claude"}); !errors.Is(err, ErrUnusable) {
			t.Errorf("a write after: %v", err)
		}
		if _, err := d.Outbox("postgres").Stats(); !errors.Is(err, ErrUnusable) {
			t.Errorf("the queue after: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a transaction on the unusable database waits")
	}
}
