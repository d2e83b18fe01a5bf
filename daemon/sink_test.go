package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/sink/postgres"
)

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSinkStatusSaysWhetherASenderRuns: while a following daemon's sender
// runs, the sink's status says failed attempts are tried again (Sending);
// once it stops, and for a scan, it does not. The warnings of the sink's
// settings are logged when the daemon starts.
func TestSinkStatusSaysWhetherASenderRuns(t *testing.T) {
	r := newRig(t)
	var log lockedLog
	o := r.opts(false)
	o.Logger = slog.New(slog.NewTextHandler(&log, nil))
	o.Sink = &postgres.Config{URL: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2",
		Warnings: []string{"sink.postgres.url_file /somewhere/team-db.url can be read by its group or by others (mode 0644)"}}
	d := New(o)
	stop := follow(t, d)
	deadline := time.Now().Add(10 * time.Second)
	for d.Status().Sink == nil || !d.Status().Sink.Sending {
		if time.Now().After(deadline) {
			t.Fatalf("no sender runs in the status of a following daemon: %+v", d.Status().Sink)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if !strings.Contains(log.String(), "level=WARN msg=\"sink.postgres.url_file /somewhere/team-db.url can be read by its group or by others (mode 0644)\" component=sink") {
		t.Errorf("the sink's warning is not in the daemon's log:\n%s", log.String())
	}
	db := openState(t, r)
	if st := sinkStatus(db); st == nil || st.Sending {
		t.Fatalf("after the daemon stopped: %+v", st)
	}
	db.Close()
	once := r.opts(true)
	once.Sink = o.Sink
	d = New(once)
	if err := d.Run(t0ctx()); err != nil {
		t.Fatal(err)
	}
	db = openState(t, r)
	if st := sinkStatus(db); st == nil || st.Sending || st.Off {
		t.Fatalf("after a scan: %+v", st)
	}
	db.Close()
	// A daemon whose config names no team database keeps the queue
	// another set up, and says it is off: nothing will send it.
	d = New(r.opts(false))
	stop = follow(t, d)
	defer stop()
	deadline = time.Now().Add(10 * time.Second)
	for st := d.Status().Sink; st == nil || !st.Off || st.Sending; st = d.Status().Sink {
		if time.Now().After(deadline) {
			t.Fatalf("the status of a daemon without a sink: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
