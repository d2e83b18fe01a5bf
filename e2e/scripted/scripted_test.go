package scripted

import (
	"slices"
	"sync"
	"testing"
)

func TestIDRoundTrip(t *testing.T) {
	scripts := map[string][]int{"read-edit": nil, "sub": nil}
	id := ID("call_", "read-edit", 3, 1)
	if id != "call_readedit_3_1" {
		t.Fatalf("ID = %q", id)
	}
	name, step, ok := ParseID(id, "call_", scripts)
	if !ok || name != "read-edit" || step != 3 {
		t.Fatalf("ParseID(%q) = %q %d %v", id, name, step, ok)
	}
	for _, bad := range []string{"call_other_1_0", "call_sub_x_0", "call_sub_1", "toolu_sub_1_0_9"} {
		if _, _, ok := ParseID(bad, "call_", scripts); ok {
			t.Errorf("ParseID(%q) found a script", bad)
		}
	}
}

func TestScriptInTakesTheLastMarker(t *testing.T) {
	if n, ok := ScriptIn("old [[script:a]] then [[script:b-2]]"); !ok || n != "b-2" {
		t.Fatalf("ScriptIn = %q %v", n, ok)
	}
	if _, ok := ScriptIn("[[script:UPPER]] no"); ok {
		t.Fatal("a marker outside the alphabet was taken")
	}
}

func TestLedger(t *testing.T) {
	var l Ledger[int]
	var wg sync.WaitGroup
	fails := make(chan bool, 10)
	for range 10 {
		wg.Go(func() { fails <- l.FailFirst("s", 1) })
	}
	wg.Wait()
	close(fails)
	n := 0
	for f := range fails {
		if f {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d first attempts failed, want 1", n)
	}
	if !l.FailFirst("s", 2) {
		t.Fatal("another step's first attempt did not fail")
	}
	if a := l.Answer(Served[int]{Script: "s", Step: 1, Usage: 7}, []string{"Bash", "Read"}); a != 1 {
		t.Fatalf("first answer numbered %d", a)
	}
	if a := l.Side(); a != 2 {
		t.Fatalf("side answer numbered %d", a)
	}
	l.Answer(Served[int]{Script: "s", Step: 2}, []string{"Edit"})
	if got := l.Offered(); !slices.Equal(got, []string{"Edit"}) {
		t.Fatalf("Offered = %v, want the last request's tools", got)
	}
	if s := l.Served(); len(s) != 2 || s[0].Usage != 7 || l.Unscripted() != 1 {
		t.Fatalf("Served = %+v, Unscripted = %d", s, l.Unscripted())
	}
}
