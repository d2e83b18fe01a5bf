package watchers

import (
	"math"
	"strings"
	"testing"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name      string
		in        string
		max       int
		final     bool
		want      []string
		oversized int
		bytes     int64
		partial   int
	}{
		{"complete", "a\nbb\r\n", 10, false, []string{"a", "bb"}, 0, 6, 0},
		{"partial held back", "a\nbc", 10, false, []string{"a"}, 0, 2, 2},
		{"partial used when final", "a\nbc", 10, true, []string{"a", "bc"}, 0, 2, 2},
		{"oversized skipped", "a\n" + long + "\nb\n", 10, false, []string{"a", "b"}, 1, int64(2 + 101 + 2), 0},
		{"exactly at cap", "0123456789\n", 10, false, []string{"0123456789"}, 0, 11, 0},
		{"empty lines kept", "\n\n", 10, false, []string{"", ""}, 0, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			st, err := ReadLines(strings.NewReader(tc.in), tc.max, tc.final, func(l []byte) error {
				got = append(got, string(l))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
			if st.Oversized != tc.oversized || st.Bytes != tc.bytes || st.Partial != tc.partial {
				t.Errorf("stats = %+v, want oversized %d bytes %d partial %d", st, tc.oversized, tc.bytes, tc.partial)
			}
		})
	}
}

// A cap near the int64 range is the largest the readers take, not an
// overflow that reads every line as too long (and skips it for good).
func TestLineCapAtTheIntRange(t *testing.T) {
	in := "a\nbb\n"
	var got []string
	st, err := ReadLines(strings.NewReader(in), math.MaxInt, false, func(l []byte) error {
		got = append(got, string(l))
		return nil
	})
	if err != nil || st.Oversized != 0 || strings.Join(got, "|") != "a|bb" {
		t.Errorf("ReadLines with a cap of MaxInt: %q %+v %v", got, st, err)
	}
	got = nil
	ts, err := TailLines(strings.NewReader(in), 0, int64(len(in)), math.MaxInt, func(l []byte, _ int64) error {
		got = append(got, string(l))
		return nil
	})
	if err != nil || ts.Oversized != 0 || strings.Join(got, "|") != "a|bb" {
		t.Errorf("TailLines with a cap of MaxInt: %q %+v %v", got, ts, err)
	}
}

// A line far beyond the reader's buffer is streamed through, not buffered.
func TestReadLinesHugeLineBoundedMemory(t *testing.T) {
	huge := strings.Repeat("y", 3<<20)
	st, err := ReadLines(strings.NewReader("a\n"+huge+"\nz\n"), 1<<20, false, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 2 || st.Oversized != 1 {
		t.Fatalf("stats = %+v", st)
	}
}
