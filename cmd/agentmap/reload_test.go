package main

import "testing"

// A config file caught between its truncation and its write must not be
// loaded: only a version seen unchanged at two checks in a row is.
func TestSettledFileWaitsForASecondLook(t *testing.T) {
	w := settledFile{loaded: "120/1"}
	steps := []struct {
		stamp string
		want  bool
	}{
		{"120/1", false}, // unchanged
		{"0/2", false},   // truncated: seen once
		{"31/3", false},  // written: seen once
		{"31/3", true},   // unchanged since: load it
	}
	for i, s := range steps {
		if got := w.changed(s.stamp); got != s.want {
			t.Fatalf("step %d (%s): changed = %v, want %v", i, s.stamp, got, s.want)
		}
		if s.want {
			w.load(s.stamp)
		}
	}
	if w.changed("31/3") {
		t.Fatal("the version loaded counted as a change")
	}
	// A file left empty is the user's choice: it loads at the second look.
	if w.changed("0/4") || !w.changed("0/4") {
		t.Fatal("a file emptied and left so was not loaded at the second look")
	}
	w.load("0/4")
	// Back to a version seen before the load counts as a change too.
	if w.changed("31/3") || !w.changed("31/3") {
		t.Fatal("a return to an earlier version was not loaded")
	}
	w.load("31/3")
	// A change and its undoing between two checks is no change.
	if w.changed("40/5") || w.changed("31/3") || w.changed("31/3") {
		t.Fatal("a change undone before the second look was loaded")
	}
}
