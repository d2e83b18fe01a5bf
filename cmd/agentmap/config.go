package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/state/durable"
)

func configUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentmap config init|check|show [--config FILE]")
	fmt.Fprintln(w, "  init   write a fully commented default config file (--force replaces an existing one)")
	fmt.Fprintln(w, "  check  validate the config file; every problem is named with its key and line")
	fmt.Fprintln(w, "  show   print the configuration in effect (the file over the defaults)")
	fmt.Fprintf(w, "The file is --config, else $%s, else the user config directory's agentmap/config.toml.\n", config.EnvConfig)
}

func cmdConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("config", flag.ContinueOnError)
	fl.SetOutput(stderr)
	file := fl.String("config", "", "the config file")
	force := fl.Bool("force", false, "init: replace an existing file")
	fl.Usage = func() { configUsage(stderr); fl.PrintDefaults() }
	// The action may come before or after the flags.
	if err := parseFlags(fl, args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "agentmap config: name what to do: init, check or show (see agentmap help config)")
		return exitUsage
	}
	action := fl.Arg(0)
	if err := parseFlags(fl, interspersed(fl, fl.Args()[1:])); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentmap config %s: unexpected argument %q (config %s takes no argument; --config FILE names the file)\n", action, fl.Arg(0), action)
		return exitUsage
	}
	path, err := config.Path(*file)
	if err != nil && *file == "" && os.Getenv(config.EnvConfig) == "" {
		// The config package's words ask for either; say what is missing.
		fmt.Fprintf(stderr, "agentmap config: %s is not set, so there is no user config directory (--config FILE names the file)\n", configDirVar())
		return exitFailure
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap config: %v\n", err)
		return exitFailure
	}
	switch action {
	case "init":
		return configInit(path, *force, stdout, stderr)
	case "check":
		c, code := loadConfig(*file, "config check", stderr)
		if c == nil {
			return code
		}
		if c.File == "" {
			fmt.Fprintf(stdout, "no config file at %s: the defaults are in effect\n", path)
		} else {
			fmt.Fprintf(stdout, "%s: ok\n", path)
		}
		// Valid, and worth a word: a password others can read.
		if w := c.Sink.Postgres.URLFileWarning(); w != "" {
			fmt.Fprintf(stderr, "agentmap config check: warning: %s\n", w)
		}
		// And settings a daemon started here could not use.
		if c.Sink.Postgres.Enabled() {
			if _, err := c.Sink.Postgres.SinkURL(); err != nil {
				fmt.Fprintf(stderr, "agentmap config check: warning: %v: a daemon started here would send nothing to the team database\n", err)
			}
		}
		return exitOK
	case "show":
		c, code := loadConfig(*file, "config show", stderr)
		if c == nil {
			return code
		}
		if c.File == "" {
			fmt.Fprintf(stdout, "# the defaults: there is no config file at %s\n", path)
		} else {
			fmt.Fprintf(stdout, "# in effect: %s over the defaults\n", c.File)
		}
		stdout.Write(c.TOML())
		return exitOK
	}
	fmt.Fprintf(stderr, "agentmap config: unknown action %q\n", action)
	configUsage(stderr)
	return exitUsage
}

func configInit(path string, force bool, stdout, stderr io.Writer) int {
	if _, err := os.Stat(path); err == nil && !force {
		fmt.Fprintf(stderr, "agentmap config init: %s already exists (config check validates it; --force replaces it)\n", path)
		return exitFailure
	}
	// The user's file, where its name leads: a config.toml linked into a
	// dotfiles repository stays a link, and its target is written.
	if err := durable.WriteOutput(path, config.DefaultFile(), 0o600); err != nil {
		fmt.Fprintf(stderr, "agentmap config init: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return exitOK
}

// loadConfig loads the config named by a --config value (or found the
// usual way) and reports its problems, one per line, on stderr. A missing
// file means the defaults, unless the file was asked for by name (--config
// or $AGENTMAP_CONFIG): then it is an error. On failure the config is nil
// and the exit code says why.
func loadConfig(flagValue, what string, stderr io.Writer) (*config.Config, int) {
	asked := flagValue != "" || os.Getenv(config.EnvConfig) != ""
	path, err := config.Path(flagValue)
	if err != nil && !asked {
		// No file asked for, and no user config directory to look for
		// one in ($HOME unset; on Linux $XDG_CONFIG_HOME too): as when
		// that directory has none, the defaults are in effect, less what
		// they would put under the home (homeless). Said, as a file the
		// user keeps there is not applied (its prices, privacy.exclude).
		fmt.Fprintf(stderr, "agentmap %s: %s is not set, so there is no user config directory: no config file is read, the defaults are in effect\n", what, configDirVar())
		return defaults(), exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", what, err)
		return nil, exitFailure
	}
	if _, missing := missingConfig(flagValue); missing {
		fmt.Fprintf(stderr, "agentmap %s: %s\n", what, noConfigFile(path))
		return nil, exitFailure
	}
	c, err := config.Load(path)
	if err != nil {
		probs := config.Problems(err)
		if len(probs) == 0 {
			fmt.Fprintf(stderr, "agentmap %s: %v\n", what, err)
			return nil, exitFailure
		}
		for _, p := range probs {
			fmt.Fprintln(stderr, p.Error())
		}
		fmt.Fprintf(stderr, "agentmap %s: %s has %d problem(s)\n", what, path, len(probs))
		return nil, exitFailure
	}
	if noHome() {
		c = homeless(c)
	}
	return c, exitOK
}

// defaults is the config in effect without a file: the defaults, less
// what they would put under a home there is not (homeless).
func defaults() *config.Config {
	c := config.Default()
	if noHome() {
		c = homeless(c)
	}
	return c
}

// missingConfig returns the path of the config file asked for by name
// (--config or $AGENTMAP_CONFIG), and whether there is no file there: a
// file not found where it was asked for is an error, not the defaults.
func missingConfig(flagValue string) (string, bool) {
	if flagValue == "" && os.Getenv(config.EnvConfig) == "" {
		return "", false
	}
	path, err := config.Path(flagValue)
	if err != nil {
		return "", false
	}
	_, err = os.Stat(path)
	return path, errors.Is(err, fs.ErrNotExist)
}

// noConfigFile says that the config file asked for is not at path.
func noConfigFile(path string) string {
	return fmt.Sprintf("no config file at %s (agentmap config init writes one)", path)
}

// noHome reports whether the user has no home directory ($HOME unset, or
// %USERPROFILE% on Windows), under which the defaults put the data
// directory and look for the agents' logs.
func noHome() bool {
	home, err := os.UserHomeDir()
	return err != nil || home == ""
}

// homeVar names the variable a home directory comes from, for messages.
func homeVar() string {
	if runtime.GOOS == "windows" {
		return "%USERPROFILE%"
	}
	return "HOME"
}

// configDirVar names the variable the user config directory comes from
// (os.UserConfigDir), for messages: on Linux $XDG_CONFIG_HOME, else
// $HOME/.config, so that without it HOME is the one missing.
func configDirVar() string {
	if runtime.GOOS == "windows" {
		return "%AppData%"
	}
	return "HOME"
}

// errNoDataDir is the error of a command that needs the data directory
// when none was given and the default one is under a home there is none of.
func errNoDataDir() error {
	return fmt.Errorf("no data directory: %s is not set, and the default one is under it (pass --data-dir DIR)", homeVar())
}

// homeless is c without what the defaults put under a home directory,
// when there is none (what a config file sets stays; config's checks let
// those defaults pass then): made from an empty home those paths are relative
// (.claude for ~/.claude), and would be taken from the working directory.
// The data directory is left unset, for the commands that need it to ask
// for --data-dir (errNoDataDir); the hash key and the export directory
// follow it, as from a data_dir (run's --data-dir moves them along); an
// agent's roots keep the absolute ones its variables name ($CODEX_HOME,
// $XDG_DATA_HOME…).
func homeless(c *config.Config) *config.Config {
	if !filepath.IsAbs(c.DataDir) { // a data_dir the config file sets stays
		if c.Maps.HashKeyFile == filepath.Join(c.DataDir, "hash.key") {
			c.Maps.HashKeyFile = filepath.Join("", "hash.key")
		}
		if c.Export.Dir == filepath.Join(c.DataDir, "exports") {
			c.Export.Dir = filepath.Join("", "exports")
		}
		c.DataDir = ""
	}
	a := &c.Agents
	for _, roots := range []*[]string{&a.Claude.Roots, &a.Codex.Roots, &a.Cursor.Roots, &a.Cursor.AppRoots,
		&a.OpenCode.Roots, &a.Copilot.Roots, &a.Gemini.Roots} {
		*roots = slices.DeleteFunc(*roots, func(d string) bool { return !filepath.IsAbs(d) })
	}
	return c
}
