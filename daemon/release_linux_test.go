package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentmap/agentmap/internal/resident"
)

// Once its first catch-up is read and the maps then due are written, a
// following daemon lets go of the state database's pages it touched since
// it last did (fewer than the 8 MB after which the load lets go of them,
// or the 50,000 events' worth after which a catch-up does): a daemon
// started over a data directory that caught up before reads every record
// and keeps none of those pages resident once idle.
func TestSettledDaemonLetsGoOfTheDatabasesPages(t *testing.T) {
	r, opt := quickRig(t, -1) // sessions kept: the load and the catch-up alone touch the pages
	const sessions = 2000
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		lines := make([]string, 20)
		for j := range lines {
			lines[j] = line(id, "user")
		}
		r.append(id+".jsonl", lines...)
	}
	if err := New(r.opts(true)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.mapOf(fmt.Sprintf("s%d", sessions-1)) == "" {
		t.Fatal("the scan wrote no map")
	}
	path := StatePath(r.data)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f := startFollowing(t, r, opt)
	defer f.stop()
	// Resident once loaded (the load reads every record), then let go.
	var kb, most int
	for until := time.Now().Add(15 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if kb, err = resident.Mapped(path); errors.Is(err, resident.ErrUnsupported) {
			t.Skip(err)
		} else if err != nil {
			t.Fatal(err)
		}
		most = max(most, kb)
		if (most >= 1024 && kb < most/8) || time.Now().After(until) {
			break
		}
	}
	t.Logf("%d KiB of the state database's %d KiB resident at most, %d KiB at the end", most, fi.Size()/1024, kb)
	if most < 1024 || kb >= most/8 {
		t.Errorf("%d KiB of the state database resident in an idle daemon, %d KiB at most", kb, most)
	}
}
