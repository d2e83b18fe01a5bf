package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPricesCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	code, out, errOut := run(t, "prices")
	if code != exitOK || !strings.Contains(out, "^claude-opus-4-8") || !strings.Contains(out, "platform.claude.com") {
		t.Fatalf("prices: code %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = run(t, "prices", "--model", "mimo-v3-ultra")
	if code != exitOK || !strings.Contains(out, "unpriced") {
		t.Errorf("unknown model: %d %q", code, out)
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[prices.\"mimo-v3\"]\ninput = 1.5\noutput = 4\ncache_write_1h = 3\n"), 0o600)
	code, out, errOut = run(t, "prices", "--config", cfg, "--model", "mimo-v3-ultra")
	if code != exitOK || !strings.Contains(out, "config [prices]") || !strings.Contains(out, "1.5") {
		t.Errorf("override: %d %q %q", code, out, errOut)
	}
}

func TestFormatCostUnpriced(t *testing.T) {
	for _, tt := range []struct {
		usd      float64
		unpriced []string
		want     string
	}{
		{0, nil, "-"},
		{1.234, nil, "$1.23"},
		{0, []string{"claude-fable-9"}, "unpriced"},
		{2, []string{"claude-fable-9"}, "$2.00+unpriced"},
		{0.00272, nil, "<$0.01"},
		{0.005, nil, "$0.01"},
		{0.001, []string{"claude-fable-9"}, "<$0.01+unpriced"},
	} {
		if got := formatCost(tt.usd, tt.unpriced); got != tt.want {
			t.Errorf("formatCost(%v, %v) = %q, want %q", tt.usd, tt.unpriced, got, tt.want)
		}
	}
}
