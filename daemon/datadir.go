package daemon

import (
	"path/filepath"

	"github.com/agentmap/agentmap/watchers"
)

// DefaultDataDir is where the daemon keeps its state and maps on this OS:
// Linux $XDG_DATA_HOME/agentmap or ~/.local/share/agentmap; macOS
// ~/Library/Application Support/agentmap; Windows %LOCALAPPDATA%\agentmap.
func DefaultDataDir(env watchers.Env) string {
	get := env.Getenv
	if get == nil {
		get = func(string) string { return "" }
	}
	switch env.GOOS {
	case "darwin":
		return filepath.Join(env.Home, "Library", "Application Support", "agentmap")
	case "windows":
		if d := get("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "agentmap")
		}
		return filepath.Join(env.Home, "AppData", "Local", "agentmap")
	}
	if d := get("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "agentmap")
	}
	return filepath.Join(env.Home, ".local", "share", "agentmap")
}
