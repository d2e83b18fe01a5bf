package e2e

import (
	"os"
	"testing"
)

func runSuite(t *testing.T, bin string) {
	w := newWorld(t, bin)
	if os.Getenv("AGENTMAP_E2E_ONLY") != "codex" {
		runClaude(t, w)
	}
	runCodex(t, w)
}
