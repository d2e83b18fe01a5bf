package report

import (
	"encoding/json"
	"slices"
	"testing"
)

// A page's row and aggregates, interned in the overview's order, are
// byte for byte what sessionRow and sessionAgg give with the overview's
// string table, and the table ends the same: a report made of pages is
// the report made of the maps. Over synthetic maps and the corpus's (whose
// files, models and errors repeat across sessions, so that strings named
// before keep their ids and a map's files are listed by ids it did not
// give).
func TestPagesInternAsTheMapsWould(t *testing.T) {
	maps := synthMaps(40)
	if bin, err := agentmapBinary(); err == nil {
		corpus, errs := Collect(t.Context(), Dir(corpusMaps(t, bin)), Filter{})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		maps = append(maps, corpus...)
		maps = append(maps, corpus...) // every string seen before
	} else {
		t.Logf("no agentmap binary (%v): synthetic maps only", err)
	}
	direct, interned := newStrtab(), newStrtab()
	files := 0
	for _, m := range maps {
		wantRow, _ := json.Marshal(sessionRow(direct, m, len(m.Events)))
		wantAgg, _ := json.Marshal(sessionAgg(direct, m))
		p, err := PageOf(m)
		if err != nil {
			t.Fatal(err)
		}
		row, a := p.interned(interned)
		gotRow, _ := json.Marshal(row)
		gotAgg, _ := json.Marshal(a)
		if string(gotRow) != string(wantRow) || string(gotAgg) != string(wantAgg) {
			t.Fatalf("session %s:\nrow %s\nwant %s\nagg %s\nwant %s", m.Session.ID, gotRow, wantRow, gotAgg, wantAgg)
		}
		files += len(a.Files) / 3
	}
	if !slices.Equal(direct.list, interned.list) {
		t.Fatalf("string tables differ: %d strings against %d", len(interned.list), len(direct.list))
	}
	if files == 0 {
		t.Fatal("no map listed a file: the test checks less than it says")
	}
}
