package e2e

import (
	"testing"
)

func runSuite(t *testing.T, bin string) {
	w := newWorld(t, bin)
	claude := runClaude(t, w)
	_ = claude
}
