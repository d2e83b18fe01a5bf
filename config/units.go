package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as a string in the file ("15m"). A
// "d" suffix (days) is accepted as well, since export windows are counted in
// days.
type Duration struct{ time.Duration }

// UnmarshalText parses "90s", "15m", "1h30m", "7d" or "0".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes the shortest form that parses back to the same value.
func (d Duration) MarshalText() ([]byte, error) { return []byte(formatDuration(d.Duration)), nil }

func (d Duration) String() string { return formatDuration(d.Duration) }

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 32)
		if err != nil || n > 100*365 {
			return 0, fmt.Errorf("not a duration (use e.g. 90s, 15m, 24h or 7d)")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration (use e.g. 90s, 15m, 24h or 7d)")
	}
	return v, nil
}

func formatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == 0:
		return "0s"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// Size is a byte count written as a string in the file ("64MiB").
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// UnmarshalText parses "64MiB", "512KiB", "1GB" or a plain number of bytes.
func (s *Size) UnmarshalText(b []byte) error {
	text := strings.TrimSpace(string(b))
	mult := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("not a size (use e.g. 64MiB, 512KiB or a number of bytes)")
	}
	*s = Size(n * mult)
	return nil
}

// MarshalText writes the largest binary unit that divides the size.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s Size) String() string {
	for _, u := range sizeUnits[:3] {
		if s != 0 && int64(s)%u.mult == 0 {
			return strconv.FormatInt(int64(s)/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}
