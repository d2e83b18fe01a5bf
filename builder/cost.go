package builder

import (
	"math"
	"regexp"
	"strings"
)

// Price is a model's list price in USD per million tokens.
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	CacheWrite float64 `toml:"cache_write" json:"cacheWrite"`
	CacheRead  float64 `toml:"cache_read" json:"cacheRead"`
	Output     float64 `toml:"output" json:"output"`
}

// Cost is the price of one request, rounded to 6 decimals so that the
// canonical float (and so the content hash) does not depend on summation
// noise.
func (p Price) Cost(in, cw, cr, out int64) float64 {
	c := (float64(in)*p.Input + float64(cw)*p.CacheWrite + float64(cr)*p.CacheRead + float64(out)*p.Output) / 1e6
	return roundCost(c)
}

func roundCost(c float64) float64 { return math.Round(c*1e6) / 1e6 }

type family struct {
	re    *regexp.Regexp
	price Price
}

// families is the embedded list-price table. Order matters: the first
// pattern that matches the normalised model name wins, so narrower families
// come before the broader ones they would also match. OpenAI and Gemini
// bill no cache writes, so their cache-write price is the input price.
var families = []family{
	// Anthropic: cache write is the 5-minute write price (1.25x input).
	{regexp.MustCompile(`opus-4[-.][5-9]`), Price{5, 6.25, 0.5, 25}},
	{regexp.MustCompile(`opus`), Price{15, 18.75, 1.5, 75}},
	{regexp.MustCompile(`sonnet`), Price{3, 3.75, 0.3, 15}},
	{regexp.MustCompile(`haiku-4|4-5-haiku`), Price{1, 1.25, 0.1, 5}},
	{regexp.MustCompile(`3-5-haiku|haiku-3-5`), Price{0.8, 1, 0.08, 4}},
	{regexp.MustCompile(`haiku`), Price{0.25, 0.3, 0.03, 1.25}},
	// OpenAI.
	{regexp.MustCompile(`^gpt-5(\.\d+)?-codex-mini`), Price{0.25, 0.25, 0.025, 2}},
	{regexp.MustCompile(`^gpt-5(\.\d+)?-mini`), Price{0.25, 0.25, 0.025, 2}},
	{regexp.MustCompile(`^gpt-5(\.\d+)?-nano`), Price{0.05, 0.05, 0.005, 0.4}},
	{regexp.MustCompile(`^gpt-5\.2`), Price{1.75, 1.75, 0.175, 14}},
	{regexp.MustCompile(`^gpt-5`), Price{1.25, 1.25, 0.125, 10}},
	{regexp.MustCompile(`^gpt-4\.1-nano`), Price{0.1, 0.1, 0.025, 0.4}},
	{regexp.MustCompile(`^gpt-4\.1-mini`), Price{0.4, 0.4, 0.1, 1.6}},
	{regexp.MustCompile(`^gpt-4\.1`), Price{2, 2, 0.5, 8}},
	{regexp.MustCompile(`^gpt-4o-mini`), Price{0.15, 0.15, 0.075, 0.6}},
	{regexp.MustCompile(`^gpt-4o`), Price{2.5, 2.5, 1.25, 10}},
	{regexp.MustCompile(`^o4-mini`), Price{1.1, 1.1, 0.275, 4.4}},
	{regexp.MustCompile(`^o3-mini`), Price{1.1, 1.1, 0.55, 4.4}},
	{regexp.MustCompile(`^o3-pro`), Price{20, 20, 20, 80}},
	{regexp.MustCompile(`^o3`), Price{2, 2, 0.5, 8}},
	{regexp.MustCompile(`^codex-mini`), Price{1.5, 1.5, 0.375, 6}},
	// Google.
	{regexp.MustCompile(`^gemini-2\.5-pro`), Price{1.25, 1.25, 0.31, 10}},
	{regexp.MustCompile(`^gemini-2\.5-flash-lite`), Price{0.1, 0.1, 0.025, 0.4}},
	{regexp.MustCompile(`^gemini-2\.5-flash`), Price{0.3, 0.3, 0.075, 2.5}},
}

// normaliseModel lower-cases a model name and drops provider prefixes
// (anthropic/, openai/, models/, Bedrock's us.anthropic.).
func normaliseModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"us.anthropic.", "eu.anthropic.", "apac.anthropic.", "anthropic.", "global.anthropic."} {
		if strings.HasPrefix(m, p) {
			m = m[len(p):]
			break
		}
	}
	return m
}

// PriceFor returns the list price of a model: the longest matching prefix
// in overrides first, then the embedded table. ok is false for an unknown
// model, which costs 0.
func PriceFor(model string, overrides map[string]Price) (p Price, ok bool) {
	m := normaliseModel(model)
	if m == "" {
		return Price{}, false
	}
	best, bestKey := -1, ""
	for prefix, price := range overrides {
		lp := strings.ToLower(prefix)
		if !strings.HasPrefix(m, lp) {
			continue
		}
		// Map order is random: break ties on the key so builds stay
		// deterministic.
		if len(lp) > best || (len(lp) == best && prefix < bestKey) {
			best, bestKey, p = len(lp), prefix, price
		}
	}
	if best >= 0 {
		return p, true
	}
	for _, f := range families {
		if f.re.MatchString(m) {
			return f.price, true
		}
	}
	return Price{}, false
}
