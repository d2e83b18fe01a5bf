package config

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// Every variable the defaults read is one install carries into the service
// (bar Windows's, where there is none): one read without being carried
// would leave the service following other roots than the shell's agentmap.
func TestServiceEnvNamesEveryVariableTheDefaultsRead(t *testing.T) {
	src, err := os.ReadFile("paths.go")
	if err != nil {
		t.Fatal(err)
	}
	read := regexp.MustCompile(`p\.env\("([A-Z_]+)"\)`).FindAllStringSubmatch(string(src), -1)
	if len(read) < len(ServiceEnv) {
		t.Fatalf("found %d reads of the environment in paths.go: the pattern no longer matches how it reads them", len(read))
	}
	for _, m := range read {
		name := m[1]
		if name == "LOCALAPPDATA" || name == "APPDATA" {
			continue
		}
		if !slices.Contains(ServiceEnv, name) {
			t.Errorf("paths.go reads $%s, which ServiceEnv does not name", name)
		}
	}
}
