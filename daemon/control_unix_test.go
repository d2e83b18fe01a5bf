//go:build unix

package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// A daemon removes the control socket at exit only while it is its own:
// one another daemon made at the same path since stays.
func TestControlSocketRemovedOnlyIfOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentmap.sock")
	first, err := listenControl(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := listenControl(path, nil) // removes the first's, makes its own
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the first listener's close removed the second's socket: %v", err)
	}
	second.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the socket is left after its own listener closed: %v", err)
	}
}
