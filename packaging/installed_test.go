package packaging

import (
	"os"
	"path/filepath"
	"testing"
)

// The config file an installed service runs with is read back from the
// unit or the LaunchAgent as install wrote it, spaces, quotes and markup
// in its name included; none installed, or none named, is "".
func TestInstalledConfig(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		home := t.TempDir()
		cfg := filepath.Join(home, `my "agent" map & co`, "config <x>.toml")
		s := Spec{GOOS: goos, Home: home, Binary: "/opt/agent map/agentmap", ConfigFile: cfg, DataDir: filepath.Join(home, "data")}
		if got := InstalledConfig(s); got != "" {
			t.Errorf("%s, nothing installed: %q", goos, got)
		}
		for _, named := range []string{cfg, ""} {
			s.ConfigFile = named
			b, err := Render(s)
			if err != nil {
				t.Fatal(err)
			}
			path, _ := s.File()
			os.MkdirAll(filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if got := InstalledConfig(s); got != named {
				t.Errorf("%s: installed config %q, want %q", goos, got, named)
			}
		}
	}
}
