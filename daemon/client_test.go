package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Every way net/http reports a connection the daemon closed without an
// answer is the daemon's refusal, and nothing else is.
func TestClosedWithoutAnswer(t *testing.T) {
	for _, err := range []error{
		io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE,
		fmt.Errorf("Get %q: %w", "http://agentmap/v1/status", errors.New("http: server closed idle connection")),
	} {
		if !closedWithoutAnswer(err) {
			t.Errorf("%v not taken for a refusal", err)
		}
	}
	if closedWithoutAnswer(errors.New("dial unix: connect: no such file or directory")) {
		t.Error("no daemon taken for a refusal")
	}
}

// A daemon that takes the connection and says nothing (stopped with
// SIGSTOP, or hung) stops a scan, a list or a flush waiting on it with
// ErrNotAnswering once a status probe goes unanswered, not after the
// call's own wait (minutes).
func TestCallsOfADaemonNotAnswering(t *testing.T) {
	defer func(p, w time.Duration) { scanProbe, probeWait = p, w }(scanProbe, probeWait)
	scanProbe, probeWait = 50*time.Millisecond, 100*time.Millisecond
	cl := testDaemon(t, func(c net.Conn) {}) // held, never answered
	for name, call := range map[string]func() error{
		"scan":        func() error { _, err := cl.Scan(context.Background()); return err },
		"list":        func() error { _, err := cl.List(context.Background()); return err },
		"flush":       func() error { _, err := cl.Flush(context.Background(), "x", false); return err },
		"flush --all": func() error { _, err := cl.Flush(context.Background(), "", true); return err },
		"rewrite":     func() error { _, err := cl.Rewrite(context.Background()); return err },
	} {
		start := time.Now()
		err := call()
		if !errors.Is(err, ErrNotAnswering) {
			t.Fatalf("%s of a daemon that does not answer: %v, want ErrNotAnswering", name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s gave up after %v", name, d)
		}
		if !strings.Contains(err.Error(), "stopped or hung") {
			t.Errorf("%s: the error does not say what may be wrong: %v", name, err)
		}
	}
}

// A daemon that answers its status but takes long over a call (a flush of
// many maps) is waited for: only probes unanswered end the wait.
func TestSlowCallOfAnAnsweringDaemonIsWaitedFor(t *testing.T) {
	defer func(p, w time.Duration) { scanProbe, probeWait = p, w }(scanProbe, probeWait)
	scanProbe, probeWait = 20*time.Millisecond, 100*time.Millisecond
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, Status{}) })
	mux.HandleFunc("/v1/flush", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond) // 25 probes, each answered
		writeJSON(w, http.StatusOK, FlushResult{Flushed: []string{"claude/x"}})
	})
	cl := testServer(t, mux)
	res, err := cl.Flush(context.Background(), "", true)
	if err != nil || len(res.Flushed) != 1 {
		t.Fatalf("flush of a slow daemon that answers its status: %+v, %v", res, err)
	}
}

// A daemon that answers the status asked before a call, then stops
// answering anything (stopped with SIGSTOP during a long flush), ends the
// call after two status probes in a row go unanswered.
func TestDaemonThatStopsAnsweringDuringACall(t *testing.T) {
	defer func(p, w time.Duration) { scanProbe, probeWait = p, w }(scanProbe, probeWait)
	scanProbe, probeWait = 20*time.Millisecond, 100*time.Millisecond
	stopped := make(chan struct{})
	defer close(stopped)
	var mu sync.Mutex
	answered := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		answered++
		first := answered == 1
		mu.Unlock()
		if !first {
			<-stopped
			return
		}
		writeJSON(w, http.StatusOK, Status{})
	})
	mux.HandleFunc("/v1/flush", func(w http.ResponseWriter, r *http.Request) { <-stopped })
	cl := testServer(t, mux)
	start := time.Now()
	_, err := cl.Flush(context.Background(), "", true)
	if !errors.Is(err, ErrNotAnswering) {
		t.Fatalf("flush of a daemon that stopped answering: %v, want ErrNotAnswering", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the flush gave up after %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if answered < 3 {
		t.Errorf("%d status requests: want the one before the call and two probes during it", answered)
	}
}

// testDaemon is a client of a socket whose connections serve hands.
func testDaemon(t *testing.T, serve func(net.Conn)) *Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serve(c)
		}
	}()
	return &Client{hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return net.Dial("unix", path) },
	}}}
}

// testServer is a client of a socket served by h.
func testServer(t *testing.T, h http.Handler) *Client {
	t.Helper()
	srv := &http.Server{Handler: h}
	ch := make(chan net.Conn, 16)
	cl := testDaemon(t, func(c net.Conn) { ch <- c })
	go func() { _ = srv.Serve(&chanListener{ch: ch, closed: make(chan struct{})}) }()
	t.Cleanup(func() { srv.Close() })
	return cl
}

// chanListener hands an http.Server the connections a testDaemon took.
type chanListener struct {
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.UnixAddr{Net: "unix"} }

// A listing larger than the 64 MB that bounds other answers (a store of
// some 140,000 sessions) reaches the client whole, written and read an
// entry at a time.
func TestListLargerThanOtherAnswers(t *testing.T) {
	e := Entry{Key: "claude/" + strings.Repeat("a", 36), Agent: "claude", ID: strings.Repeat("a", 36),
		Path: "claude/" + strings.Repeat("b", 200) + ".json.gz", Repos: []string{strings.Repeat("r", 100)},
		Start: time.Unix(1700000000, 0).UTC(), Calls: 3, Requests: 2, Tokens: 1234, CostUSD: 0.5, Recorded: true}
	es := make([]Entry, 150000) // about 75 MB of JSON
	for i := range es {
		es[i] = e
		es[i].Calls = i
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, Status{}) })
	mux.HandleFunc("/v1/list", func(w http.ResponseWriter, r *http.Request) { writeJSONList(w, es) })
	got, err := testServer(t, mux).List(context.Background())
	if err != nil {
		t.Fatalf("list of %d entries: %v", len(es), err)
	}
	if len(got) != len(es) || got[len(got)-1].Calls != len(es)-1 || !got[0].Start.Equal(e.Start) || got[7].Repos[0] != e.Repos[0] {
		t.Fatalf("list of %d entries came back as %d (last %+v)", len(es), len(got), got[len(got)-1])
	}
	// An empty store lists as an empty array.
	es = nil
	if got, err := testServer(t, mux).List(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("empty list: %v, %v", got, err)
	}
}

// A daemon of an earlier version answers an empty store with null: an
// empty listing. A listing cut short (the daemon gone half way) is an
// error, not the entries that came.
func TestListOfAnEarlierDaemonAndACutListing(t *testing.T) {
	answer := "null\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, Status{}) })
	mux.HandleFunc("/v1/list", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	})
	cl := testServer(t, mux)
	if got, err := cl.List(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("null: %v, %v", got, err)
	}
	answer = `[{"key":"claude/a","agent":"claude","id":"a"}` + "\n" + `,{"key":"claude/b",`
	if got, err := cl.List(context.Background()); err == nil {
		t.Fatalf("a listing cut short came back as %d entries and no error", len(got))
	}
	answer = `{"error":"x"}`
	if _, err := cl.List(context.Background()); err == nil {
		t.Fatal("an object taken for a listing")
	}
}

// Named asks for the entries an id names, by the id and its key; a daemon
// of an earlier version, which answers with every entry, is read as well.
func TestNamedAsksForWhatTheIDNames(t *testing.T) {
	es := []Entry{{Key: "claude/abc1", Agent: "claude", ID: "abc1"}, {Key: "codex/xyz", Agent: "codex", ID: "xyz"}}
	var asked url.Values
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, Status{}) })
	mux.HandleFunc("/v1/list", func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Query()
		writeJSONList(w, es) // as an earlier daemon answers: every entry
	})
	got, err := testServer(t, mux).Named(context.Background(), Named{ID: "claude-code/ab", Key: "claude/ab"})
	if err != nil || len(got) != 2 {
		t.Fatalf("named: %v, %v", got, err)
	}
	if asked.Get("id") != "claude-code/ab" || asked.Get("key") != "claude/ab" {
		t.Errorf("asked with %v", asked)
	}
}
