package copilot

import "encoding/json"

// ClientTokens is Copilot CLI's own accounting of a session, for checks of
// the map's totals against it: the model metrics of the log's last
// session.shutdown (they are cumulative over resumes), input (cached
// tokens included) plus output. found is false when the log has no
// session.shutdown, so there is nothing to compare with.
func ClientTokens(lines [][]byte) (total int64, found bool) {
	for _, l := range lines {
		var r struct {
			Type string `json:"type"`
			Data struct {
				ModelMetrics map[string]struct {
					Usage struct {
						Input  int64 `json:"inputTokens"`
						Output int64 `json:"outputTokens"`
					} `json:"usage"`
				} `json:"modelMetrics"`
			} `json:"data"`
		}
		if json.Unmarshal(l, &r) != nil || r.Type != "session.shutdown" {
			continue
		}
		found, total = true, 0
		for _, m := range r.Data.ModelMetrics {
			total += m.Usage.Input + m.Usage.Output
		}
	}
	return total, found
}
