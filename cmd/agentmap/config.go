package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/agentmap/agentmap/state/durable"
	"io"
	"io/fs"
	"os"

	"github.com/agentmap/agentmap/config"
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
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return exitUsage
	}
	action := fl.Arg(0)
	if err := fl.Parse(interspersed(fl, fl.Args()[1:])); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentmap config %s: unexpected argument %q\n", action, fl.Arg(0))
		return exitUsage
	}
	path, err := config.Path(*file)
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
	if err := durable.WriteFile(path, config.DefaultFile(), 0o600); err != nil {
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
	path, err := config.Path(flagValue)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", what, err)
		return nil, exitFailure
	}
	if flagValue != "" || os.Getenv(config.EnvConfig) != "" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "agentmap %s: no config file at %s (agentmap config init writes one)\n", what, path)
			return nil, exitFailure
		}
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
	return c, exitOK
}
