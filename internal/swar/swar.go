// Package swar tests eight bytes of a string at a time in a uint64 (SIMD
// within a register): the JSON writers of the state and of the maps copy
// the runs of a string that need no escape this way, and the name check
// finds printable ones, where nearly every id, model, tool and path is
// plain all through.
package swar

// Ones and Highs are a byte of 0x01, and of 0x80, in each of the eight.
const (
	Ones  = 0x0101010101010101
	Highs = 0x8080808080808080
)

// Word is the eight bytes of s from i, little-endian.
func Word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Zero has a high bit set where x has a zero byte, and only if it has one
// (the bits above a zero byte may be set too).
func Zero(x uint64) uint64 {
	return (x - Ones) &^ x & Highs
}

// Below has a high bit set where w has a byte below c (c at most 0x80),
// and only if it has one.
func Below(w uint64, c byte) uint64 {
	return (w - uint64(c)*Ones) &^ w & Highs
}

// Run returns the length of a prefix of s whose bytes all pass plain,
// eight at a time: up to the first eight that hold one that fails, or the
// whole of s when its last eight pass over the words before them. A tail
// shorter than eight bytes, in a string shorter than eight, is left to the
// caller.
func Run(s string, plain func(uint64) bool) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plain(Word(s, i)) {
			return i
		}
	}
	if i < len(s) && len(s) >= 8 && plain(Word(s, len(s)-8)) {
		return len(s)
	}
	return i
}
