package daemon

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/state/datadir"
	"github.com/agentmap/agentmap/state/mapstore"

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

// prepareDataDir makes the data directory agentmap's (created 0700 with
// its marker) and checks that it and every file in it are the user's
// alone before any is used. A place that can never be a data directory
// (the home directory, the config's) is refused however it was named: a
// config's data_dir is checked when the config loads, a --data-dir here.
func (d *Daemon) prepareDataDir() error {
	if err := SafeDataDir(d.opt.DataDir); err != nil {
		return err
	}
	if err := datadir.Claim(d.opt.DataDir); err != nil {
		return err
	}
	if err := datadir.Check(d.opt.DataDir); err != nil {
		return fmt.Errorf("data directory not safe to use: %w", err)
	}
	return nil
}

// SafeDataDir refuses dir when it can never be a data directory
// (datadir.Unsafe): the root, the home directory or a parent of it, the
// directory of the usual config file or a parent of it. It is the check a
// config's data_dir gets, for a directory named otherwise (--data-dir).
func SafeDataDir(dir string) error {
	home, _ := os.UserHomeDir()
	cfg, _ := config.Path("")
	if why := datadir.Unsafe(dir, home, cfg); why != "" {
		return fmt.Errorf("%s cannot be the data directory: %s", dir, why)
	}
	return nil
}

// removeOrphans removes the temporary files of map writes a crash
// interrupted. It runs with the state locked: no other daemon writes.
func (d *Daemon) removeOrphans() {
	removed, err := mapstore.New(MapsDir(d.opt.DataDir)).RemoveOrphans()
	if err != nil {
		d.log.Warn("cannot remove interrupted map writes", "component", "store", "err", err)
	} else if removed > 0 {
		d.log.Info("removed the temporary files of interrupted map writes", "component", "store", "count", removed)
	}
}
