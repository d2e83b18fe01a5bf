package daemon

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
)

// Recent keeps the newest n records that match, newest first, over many
// more records than it holds at a time, and leaves out the sessions with
// no map written.
func TestRecentKeepsTheNewest(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var ss []*state.Session
	for i := range 1000 {
		// Keys out of time order, so that the walk (by key) meets them so.
		id := fmt.Sprintf("s%04d", (i*7919)%1000)
		agent := []string{"claude", "codex"}[i%2]
		s := &state.Session{Key: agent + "/" + id, Agent: agent, NativeID: id}
		if i%10 != 9 {
			s.Flush = &state.Flush{Path: agent + "/2026/05/" + id + ".json.gz",
				Sum: state.Summary{StartedAt: t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)}}
		}
		ss = append(ss, s)
	}
	if err := db.PutSessions(ss...); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 999; i >= 0 && len(want) < 25; i-- {
		if i%10 != 9 && i%2 == 1 {
			want = append(want, ss[i].NativeID)
		}
	}
	es, err := Recent(db, "codex", "", 25)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the 25 newest of codex:\n%q\nwant\n%q", got, want)
	}
	if es, _ := Recent(db, "", ss[998].NativeID[:4], 1000); len(es) != 9 || es[0].ID != ss[998].NativeID {
		t.Errorf("by prefix %q: %d sessions, the first %+v", ss[998].NativeID[:4], len(es), es)
	}
}
