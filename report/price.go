package report

import "github.com/agentmap/agentmap/builder/prices"

// priced reports whether the price table knows model, the one place that
// decides when a cost is shown as "unpriced". A map's costs were computed
// when it was written; a model the table does not know cost 0 there, which
// is not the same as free.
func priced(model string) bool {
	_, ok := prices.Lookup(model)
	return ok
}
