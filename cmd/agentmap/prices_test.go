package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/config"
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
	os.WriteFile(cfg, []byte("[prices.\"mimo-v3\"]\ninput = 1.5\ncache_write = 1.5\ncache_read = 0.15\noutput = 4\ncache_write_1h = 3\n"), 0o600)
	code, out, errOut = run(t, "prices", "--config", cfg, "--model", "mimo-v3-ultra")
	if code != exitOK || !strings.Contains(out, "config [prices]") || !strings.Contains(out, "1.5") {
		t.Errorf("override: %d %q %q", code, out, errOut)
	}
	// An override that leaves its cache rates out is refused, not applied
	// at $0 for the tokens it forgot.
	os.WriteFile(cfg, []byte("[prices.\"claude-opus-4-6\"]\ninput = 1\noutput = 2\n"), 0o600)
	code, out, errOut = run(t, "prices", "--config", cfg, "--model", "claude-opus-4-6")
	if code == exitOK || !strings.Contains(errOut, "prices.claude-opus-4-6.cache_read") || !strings.Contains(errOut, "prices.claude-opus-4-6.cache_write") {
		t.Errorf("incomplete override: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, "config", "check", "--config", cfg)
	if code == exitOK || !strings.Contains(errOut, "cache_read") {
		t.Errorf("config check of an incomplete override: %d %q %q", code, out, errOut)
	}
}

// [prices."unknown"] prices the requests whose log names no model: in the
// price list and in the map that build writes.
func TestUnknownModelOverride(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	// A Codex rollout whose turns name no model.
	src := "../../testdata/codex/rollout-2026-03-01T09-00-26-0190aaab-0000-7000-8000-00000000b002.jsonl"
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, filepath.Base(src))
	os.WriteFile(log, regexp.MustCompile(`,"model":"[^"]*"`).ReplaceAll(data, nil), 0o600)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[prices.unknown]\ninput = 1.25\ncache_write = 1.25\ncache_read = 0.125\noutput = 10\n"), 0o600)

	if code, out, _ := run(t, "prices", "--model", "unknown"); code != exitOK || !strings.Contains(out, "unpriced") || !strings.Contains(out, `[prices."unknown"]`) {
		t.Errorf("prices --model unknown without an override: %d %q", code, out)
	}
	if code, out, errOut := run(t, "prices", "--config", cfg, "--model", "unknown"); code != exitOK || strings.HasPrefix(out, "unknown: unpriced") || !strings.Contains(out, "config [prices]") {
		t.Errorf("prices --model unknown with an override: %d %q %q", code, out, errOut)
	}

	cost := func(args ...string) (float64, []string) {
		t.Helper()
		code, out, errOut := run(t, append([]string{"build", "-o", "-"}, args...)...)
		if code != exitOK {
			t.Fatalf("build %v: %d %s", args, code, errOut)
		}
		var m struct {
			Totals struct {
				CostUSD float64 `json:"costUsd"`
			} `json:"totals"`
			Session struct {
				Models []string `json:"models"`
			} `json:"session"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m.Totals.CostUSD, m.Session.Models
	}
	if usd, models := cost(log); usd != 0 || !slices.Contains(models, "unknown") {
		t.Errorf("without an override: cost %v, models %v (want 0 and unknown)", usd, models)
	}
	if usd, _ := cost("--config", cfg, log); usd <= 0 {
		t.Errorf("with [prices.unknown]: cost %v, want it priced", usd)
	}
}

// The example in the default config file names one model exactly and
// repeats its built-in price: uncommented as it stands, it changes no
// price, least of all those of the models beside it.
func TestConfigExampleOverrideIsExact(t *testing.T) {
	var example []string
	for _, l := range strings.Split(string(config.DefaultFile()), "\n") {
		switch {
		case strings.HasPrefix(l, "# [prices."):
			example = append(example, strings.TrimPrefix(l, "# "))
		case len(example) > 0 && strings.HasPrefix(l, "# "):
			example = append(example, strings.TrimPrefix(l, "# "))
		case len(example) > 0:
			goto done
		}
	}
done:
	if len(example) == 0 {
		t.Fatal("no [prices] example in the default file")
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte(strings.Join(example, "\n")+"\n"), 0o600)
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatalf("the example, uncommented: %v", err)
	}
	table := prices.Default().With(priceOverrides(c))
	usages := []prices.Usage{
		{In: 1e6, CW5m: 1e6, CW1h: 1e6, CR: 1e6, Out: 1e6},
		{In: 1e6, CW5m: 1e6, CW1h: 1e6, CR: 1e6, Out: 1e6, Fast: true},
		{In: 10, CR: 900_000, Out: 10},
	}
	for _, m := range []string{
		"claude-opus-4", "claude-opus-4-20250514", "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8",
		"claude-opus-5", "claude-opus-5-5", "claude-sonnet-4-5", "claude-sonnet-5", "claude-sonnet-5-5", "claude-haiku-4-5", "claude-haiku-5-5",
		"claude-fable-5", "claude-fable-5-1", "claude-fable-5-2", "gpt-5", "gpt-5-codex", "gpt-5.2-codex", "gpt-5.4", "gpt-5.4-mini", "gpt-5.5",
		"gpt-5.6-sol", "gpt-6-sol", "gpt-6.1-sol", "gemini-2.5-pro", "gemini-3-pro-preview", "mimo-v2.5", "mimo-v2.5-pro",
	} {
		want, wok := prices.Lookup(m)
		got, gok := table.Lookup(m)
		if wok != gok {
			t.Errorf("%s: priced %v by the table, %v with the example", m, wok, gok)
			continue
		}
		for _, u := range usages {
			if w, g := want.Cost(u), got.Cost(u); w != g {
				t.Errorf("%s: the example (%v) changes a cost from %v to %v", m, example[0], w, g)
				break
			}
		}
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
