package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
)

// README.md documents every key of the default config file, and
// the commands it describes exist.
func TestOperationsDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	section := ""
	header := regexp.MustCompile(`^#?\s*\[([^\]]+)\]\s*$`)
	key := regexp.MustCompile(`^#?\s*([a-z_]+)\s*=`)
	var keys []string
	for _, l := range strings.Split(string(config.DefaultFile()), "\n") {
		if m := header.FindStringSubmatch(l); m != nil {
			section = m[1]
			if strings.HasPrefix(section, "prices.") {
				section = "prices.<model prefix>"
			}
			continue
		}
		m := key.FindStringSubmatch(l)
		if m == nil || m[1] == "exclude" && strings.HasPrefix(l, "# Example") {
			continue
		}
		k := m[1]
		if section != "" {
			k = section + "." + k
		}
		keys = append(keys, k)
	}
	if len(keys) < 20 {
		t.Fatalf("only %d keys found in the default file: %v", len(keys), keys)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if !strings.Contains(text, "| `"+k+"` |") {
			t.Errorf("README.md has no reference row for %s", k)
		}
	}
	for _, c := range commands() {
		switch c.name {
		case "install", "uninstall", "config", "status", "list", "show", "flush", "doctor":
			if !strings.Contains(text, "agentmap "+c.name) {
				t.Errorf("README.md does not describe agentmap %s", c.name)
			}
		}
	}
}
