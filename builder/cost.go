package builder

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
)

// Price is a model's list price; see package prices.
type Price = prices.Price

// PriceFor returns the list price of a model: the longest matching prefix
// in overrides first, then the embedded table. ok is false for an unpriced
// model, which costs 0 in the map.
func PriceFor(model string, overrides map[string]Price) (Price, bool) {
	return prices.Default().With(overrides).Lookup(model)
}

// requestUsage splits a request's usage for pricing: the 1-hour part of
// the cache writes is priced apart from the 5-minute part.
func requestUsage(l *event.LLM) prices.Usage {
	cw1h := min(max(l.CW1h, 0), l.CW)
	return prices.Usage{In: l.In, CW5m: l.CW - cw1h, CW1h: cw1h, CR: l.CR, Out: l.Out, Fast: l.Fast}
}

func roundCost(c float64) float64 { return prices.Round(c) }
