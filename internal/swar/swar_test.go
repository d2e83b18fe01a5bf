package swar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Below and Zero find exactly the bytes they name, in every place of a
// word, over random words and words of one byte changed.
func TestBelowAndZero(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(w uint64) {
		for _, c := range []byte{0x01, 0x20, 0x21, 0x80} {
			want := false
			for k := range 8 {
				want = want || byte(w>>(8*k)) < c
			}
			if got := Below(w, c) != 0; got != want {
				t.Fatalf("Below(%#016x, %#x) = %v", w, c, got)
			}
		}
		want := false
		for k := range 8 {
			want = want || byte(w>>(8*k)) == 0
		}
		if got := Zero(w) != 0; got != want {
			t.Fatalf("Zero(%#016x) = %v", w, got)
		}
	}
	for range 100000 {
		w := r.Uint64()
		check(w)
		k := r.IntN(8)
		check(w&^(0xff<<(8*k)) | uint64(r.IntN(0x30))<<(8*k)) // a byte near the bounds
	}
}

// Run is the run of plain bytes a byte-by-byte reading finds, to the
// eight bytes it may stop short by, for every length up to 24 and every
// place of a byte that is not plain.
func TestRun(t *testing.T) {
	plainByte := func(c byte) bool { return c >= 'a' && c <= 'z' }
	plain := func(w uint64) bool {
		for k := range 8 {
			if !plainByte(byte(w >> (8 * k))) {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 24; n++ {
		for bad := -1; bad < n; bad++ {
			b := []byte(strings.Repeat("x", n))
			if bad >= 0 {
				b[bad] = '"'
			}
			s := string(b)
			got := Run(s, plain)
			want := n // the plain prefix
			if bad >= 0 {
				want = bad
			}
			if got > want {
				t.Fatalf("Run(%q) = %d, past the byte at %d", s, got, want)
			}
			if bad < 0 && n >= 8 && got != n {
				t.Fatalf("Run(%q) = %d of a plain string", s, got)
			}
			if want-got >= 8 && !(n < 8) {
				t.Fatalf("Run(%q) = %d, short of %d by a whole word", s, got, want)
			}
		}
	}
}
