package words

import "testing"

func TestCounted(t *testing.T) {
	for n, want := range map[int]string{0: "0 logs", 1: "1 log", 2: "2 logs"} {
		if got := Counted(n, "log"); got != want {
			t.Errorf("Counted(%d): %q, want %q", n, got, want)
		}
	}
}
