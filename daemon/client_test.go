package daemon

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
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
