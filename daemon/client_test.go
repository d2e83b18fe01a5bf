package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
// SIGSTOP, or hung) stops a scan waiting on it with ErrNotAnswering once a
// status probe goes unanswered, not after scanWait.
func TestScanOfADaemonNotAnswering(t *testing.T) {
	defer func(p, w time.Duration) { scanProbe, probeWait = p, w }(scanProbe, probeWait)
	scanProbe, probeWait = 50*time.Millisecond, 100*time.Millisecond
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer l.Close()
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held, never answered
			mu.Unlock()
		}
	}()
	cl := &Client{hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return net.Dial("unix", path) },
	}}}
	start := time.Now()
	_, err = cl.Scan(context.Background())
	if !errors.Is(err, ErrNotAnswering) {
		t.Fatalf("scan of a daemon that does not answer: %v, want ErrNotAnswering", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the scan gave up after %v", d)
	}
	if !strings.Contains(err.Error(), "stopped or hung") {
		t.Errorf("the error does not say what may be wrong: %v", err)
	}
}
