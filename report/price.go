package report

import "slices"

// unpricedModels names the models whose tokens have no cost in m, in the
// order the map first uses them: the one place that decides when a cost
// is shown as "unpriced". The map's costs were computed with the prices in
// effect when it was written, the config's [prices] included, so the map
// says what had a price, not the embedded table alone: a model an override
// priced is not unpriced here while `list` and `show` give its cost (they
// read the same rule, mapfile's UnpricedModels). A request that names no
// model is "unknown", as everywhere in the report.
func unpricedModels(m *Map) []string {
	var out []string
	for _, name := range m.UnpricedModels("") {
		if name = modelName(name); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
