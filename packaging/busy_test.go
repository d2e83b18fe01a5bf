package packaging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state/datadir"
)

// A purge asks Busy when its step comes, after the service is stopped: a
// dry run that stops the service first cannot tell whether the daemon it
// finds is the service's, and does not say it would refuse.
func TestPurgeAsksBusy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := datadir.Claim(dir); err != nil {
		t.Fatal(err)
	}
	busy := errors.New("a daemon is running on it")
	var asked []string
	p := &Plan{Steps: []Step{{Op: Purge, Path: dir}}, Busy: func(d string) (func(), error) {
		asked = append(asked, d)
		return nil, busy
	}}
	var out bytes.Buffer
	p.Print(&out)
	if !strings.Contains(out.String(), "would refuse: "+busy.Error()) {
		t.Errorf("dry run: %q", out.String())
	}
	if err := p.Apply(context.Background(), nil, &out); !errors.Is(err, busy) {
		t.Errorf("apply: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("a directory in use was removed")
	}
	if len(asked) != 2 || asked[0] != dir {
		t.Errorf("asked about %q", asked)
	}

	stopped, released := false, false
	run := func(context.Context, ...string) ([]byte, error) { stopped = true; return nil, nil }
	p = &Plan{Steps: []Step{{Op: Run, Args: []string{"systemctl", "--user", "disable", "--now", "agentmap.service"}}, {Op: Purge, Path: dir}},
		Busy: func(string) (func(), error) {
			if stopped {
				// held until the directory is gone
				return func() {
					if _, err := os.Stat(dir); err == nil {
						t.Error("the hold was let go before the directory was removed")
					}
					released = true
				}, nil
			}
			return nil, busy
		}}
	out.Reset()
	p.Print(&out)
	if !p.StopsFirst() || strings.Contains(out.String(), "refuse") {
		t.Errorf("dry run that stops the service first: %q", out.String())
	}
	if err := p.Apply(context.Background(), run, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("the directory stayed once the service's daemon was stopped")
	}
	if !released {
		t.Error("the directory's hold was never let go")
	}
}
