package builder

import "testing"

// A client total's model and a request's are one model under sameModel
// when they differ only in how the client or a provider spells it, and
// two when they are two models.
func TestSameModel(t *testing.T) {
	same := [][2]string{
		{"claude-opus-4-6[1m]", "claude-opus-4-6"},
		{"us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6"},
		{"anthropic.claude-opus-4-6-v2:0", "claude-opus-4-6"},
		{"global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"},
		{"claude-opus-4-5@20251101", "claude-opus-4-5-20251101"},
		{"claude-opus-4-5", "claude-opus-4-5-20251101"},
		{"Claude-Sonnet-4-5", "claude-sonnet-4-5"},
	}
	for _, p := range same {
		if sameModel(p[0]) != sameModel(p[1]) {
			t.Errorf("%s and %s are two models: %q, %q", p[0], p[1], sameModel(p[0]), sameModel(p[1]))
		}
	}
	two := [][2]string{
		{"deepseek-v3", "deepseek-v2"},
		{"claude-opus-4-6", "claude-opus-4-5"},
		{"claude-sonnet-4-5", "claude-haiku-4-5"},
		{"gpt-5.5", "gpt-5.5-pro"},
	}
	for _, p := range two {
		if sameModel(p[0]) == sameModel(p[1]) {
			t.Errorf("%s and %s are one model: %q", p[0], p[1], sameModel(p[0]))
		}
	}
}
