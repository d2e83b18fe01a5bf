package daemon

import (
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon/exporter"
)

func TestExportSchedule(t *testing.T) {
	for _, c := range []struct {
		since  string
		policy exporter.Policy
		window time.Duration
		bad    bool
	}{
		{"", exporter.Incremental, 0, false},
		{"incremental", exporter.Incremental, 0, false},
		{"all", exporter.All, 0, false},
		{"7d", exporter.Window, 7 * 24 * time.Hour, false},
		{"36h", exporter.Window, 36 * time.Hour, false},
		{"sometimes", 0, 0, true},
		{"0s", 0, 0, true},
	} {
		cfg, err := ExportOptions{Every: time.Hour, Dir: "x", Formats: []string{"jsonl"}, Since: c.since}.schedule()
		if (err != nil) != c.bad {
			t.Errorf("since %q: error %v", c.since, err)
			continue
		}
		if !c.bad && (cfg.Policy != c.policy || cfg.Window != c.window) {
			t.Errorf("since %q: policy %d window %v", c.since, cfg.Policy, cfg.Window)
		}
	}
	if _, err := (ExportOptions{Every: time.Hour, Dir: "x", Formats: []string{"csv"}}).schedule(); err == nil {
		t.Error("an unknown format was accepted")
	}
}
