package daemon

import (
	"context"
	"testing"
)

// A scan with nothing new has nothing to catch up on: the bytes after the
// cursor of a log whose last line is still unfinished, looked at by the
// scan before, are not history still to read (its progress read "0% of
// 6.1 kB"); once the line grows they are.
func TestUnfinishedLastLineIsNoHistoryToRead(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"), `{"s":"s1","k":"ll`)
	r.once()
	total := func() int64 {
		t.Helper()
		var most int64 = -1
		o := r.opts(true)
		o.Progress = func(done, total int64, sessions int) { most = max(most, total) }
		if err := New(o).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return most
	}
	if got := total(); got > 0 {
		t.Errorf("a scan with nothing new counts %d bytes to read", got)
	}
	r.append("s1.jsonl", `m"}`+"\n")
	if got := total(); got <= 0 {
		t.Errorf("a scan after the last line was finished counts %d bytes to read", got)
	}
}
