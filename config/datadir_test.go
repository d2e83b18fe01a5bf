package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data_dir that `uninstall --purge` must never remove is refused.
func TestDataDirThatIsNotOursIsRefused(t *testing.T) {
	home, _ := os.UserHomeDir()
	if home == "" {
		t.Skip("no home directory")
	}
	for _, dir := range []string{"~", "/", "~/", filepath.Dir(home)} {
		c := Default()
		c.DataDir = currentPlatform().expand(dir)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "data_dir") {
			t.Errorf("data_dir = %q accepted: %v", dir, err)
		}
	}
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("the default data_dir: %v", err)
	}
}
