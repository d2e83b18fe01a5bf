package codex

import (
	"testing"
	"time"
)

// checkStamp: a stamp read without time.Parse reads as time.Parse reads it.
func checkStamp(t *testing.T, s string) {
	t.Helper()
	got, ok := utcMillis([]byte(s))
	if !ok {
		return
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%q: read as %d, time.Parse: %v", s, got, err)
	}
	if want := tm.UnixMilli(); got != want {
		t.Fatalf("%q: read as %d, time.Parse gives %d", s, got, want)
	}
}

var stampCases = []string{
	"2025-11-07T08:44:25.123Z", "2025-11-07T08:44:25Z", "2025-11-07T08:44:25.1Z",
	"2025-11-07T08:44:25.123456789Z", "2025-11-07T08:44:25.1234567891234Z", "2024-02-29T23:59:59.999Z",
	"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z",
	"9999-12-31T23:59:59.9999999999Z", "2025-13-01T00:00:00Z", "2025-00-01T00:00:00Z", "2025-04-31T00:00:00Z",
	"2025-11-07T24:00:00Z", "2025-11-07T08:60:00Z", "2025-11-07T08:44:60Z", "2025-11-07T08:44:25.Z",
	"2025-11-07T08:44:25,5Z", "2025-11-07t08:44:25Z", "2025-11-07T08:44:25z", "2025-11-07T08:44:25.12a3Z",
	"2025-11-07T08:44:25+00:00", "2025-11-07T08:44:25.5+09:00", "+025-11-07T08:44:25Z", "2025-1-07T08:44:25Z",
	"-025-11-07T08:44:25Z", "2025-11-07T08:44:2Z", "", "Z", "1969-12-31T23:59:59.9995Z",
}

func TestStampsReadAsTimeParseReadsThem(t *testing.T) {
	for _, s := range stampCases {
		checkStamp(t, s)
	}
	// The forms Codex writes are read without it.
	for _, s := range []string{"2025-11-07T08:44:25.123Z", "2024-02-29T23:59:59Z", "1969-12-31T23:59:59.9995Z"} {
		if _, ok := utcMillis([]byte(s)); !ok {
			t.Errorf("%q is not read without time.Parse", s)
		}
	}
}

// TestStampsOfEveryEra reads a day in five, from year 0 to 9999, at
// times that carry across the day.
func TestStampsOfEveryEra(t *testing.T) {
	end := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := time.Date(0, 1, 1, 23, 59, 59, 999_500_000, time.UTC); d.Before(end); d = d.AddDate(0, 0, 5) {
		s := d.Format(time.RFC3339Nano)
		if _, ok := utcMillis([]byte(s)); !ok {
			t.Fatalf("%q is not read without time.Parse", s)
		}
		checkStamp(t, s)
	}
}

func FuzzStamp(f *testing.F) {
	for _, s := range stampCases {
		f.Add(s)
	}
	f.Fuzz(checkStamp)
}
