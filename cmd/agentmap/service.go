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
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/packaging"
	"github.com/agentmap/agentmap/state"
)

func cmdInstall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("install", flag.ContinueOnError)
	fl.SetOutput(stderr)
	file := fl.String("config", "", "the config file the service runs with")
	dryRun := fl.Bool("dry-run", false, "print the files that would be written and the commands that would be run, and change nothing")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap install [--config FILE] [--dry-run]")
		fmt.Fprintln(stderr, "Installs agentmap as your per-user service (systemd --user on Linux, a LaunchAgent on macOS)")
		fmt.Fprintln(stderr, "and starts it. Running it again brings the service up to date.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err) // parseFlags has said what was wrong
	}
	if unexpectedArgs(fl, "install", stderr) {
		return exitUsage
	}
	// The service's environment: the config file, data directory and
	// roots below are reckoned in it, as the service will.
	spec0, err := packaging.Current("", "")
	if err != nil {
		fmt.Fprintf(stderr, "agentmap install: %v\n", err)
		return exitFailure
	}
	earlier, _ := packaging.InstalledEnv(spec0)
	env := planServiceEnv(&spec0, earlier, packaging.ManagerEnv(ctx, spec0, packaging.ExecRunner), os.LookupEnv)
	defer applyEnv(env.view)()
	// Installed again without --config (after an upgrade), the service
	// keeps the config file it runs with: on the default one it would map
	// into another data directory, without the file's privacy.exclude.
	if *file == "" && os.Getenv(config.EnvConfig) == "" {
		if kept := installedConfig(); kept != "" {
			if _, err := os.Stat(kept); err == nil {
				*file = kept
				fmt.Fprintf(stderr, "agentmap install: the service keeps its config file %s (--config names another)\n", kept)
			} else {
				fmt.Fprintf(stderr, "agentmap install: the service ran with %s, which is gone: it runs on the usual config from now on\n", kept)
			}
		}
	}
	// The service must not start with a config that does not load. A dry
	// run plans with the defaults in place of a file that is not there yet
	// (config init may be the next step) and says the install would stop.
	var c *config.Config
	var code int
	if path, missing := missingConfig(*file); missing && *dryRun {
		fmt.Fprintf(stderr, "agentmap install: warning: install would stop here: %s\n", noConfigFile(path))
		c = defaults()
	} else if c, code = loadConfig(*file, "install", stderr); c == nil {
		return code
	}
	dataDirSeen(c.DataDir)
	spec, err := packaging.Current(serviceConfigFile(*file, c), c.DataDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap install: %v\n", err)
		return exitFailure
	}
	spec.Env = env.give
	env.say(stdout, stderr, spec.GOOS, c.DataDir)
	if w := c.Sink.Postgres.PasswordEnvWarning(); w != "" {
		fmt.Fprintf(stderr, "agentmap install: warning: %s\n", w)
	}
	plan, err := packaging.InstallPlan(ctx, spec, packaging.ExecRunner)
	if *dryRun && plan != nil {
		// The plan is what was asked for; what would stop it is a warning.
		plan.Print(stdout)
		for _, e := range unjoin(err) {
			fmt.Fprintf(stderr, "agentmap install: warning: install would stop here: %v\n", e)
		}
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap install: %v\n", err)
		return exitFailure
	}
	if err := plan.Apply(ctx, packaging.ExecRunner, stdout); err != nil {
		fmt.Fprintf(stderr, "agentmap install: %v\n", err)
		return exitFailure
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(stdout, n)
	}
	fmt.Fprintln(stdout, "agentmap is installed and running; it catches up on existing logs in the background")
	return exitOK
}

// keptOutside names what agentmap wrote outside the data directory that a
// purge leaves, as it removes nothing outside it: the exports' directory
// and the hashed mode's key, when the config puts them elsewhere and they
// exist. Said, not removed: they may be shared, or wanted.
func keptOutside(dataDir string, c *config.Config) []string {
	var out []string
	inside := func(p string) bool {
		rel, err := filepath.Rel(dataDir, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	for _, k := range []struct{ what, path string }{
		{"the exports' directory (export.dir)", c.Export.Dir},
		{"the hashed mode's key (maps.hash_key_file)", c.Maps.HashKeyFile},
	} {
		if k.path == "" || inside(k.path) {
			continue
		}
		if _, err := os.Stat(k.path); err == nil {
			out = append(out, fmt.Sprintf("kept: %s %s, outside the data directory: remove it by hand if you want it gone", k.what, k.path))
		}
	}
	return out
}

// installedConfig is the config file the installed service runs with, ""
// when none is named or no service is installed (packaging.InstalledConfig).
func installedConfig() string {
	s, err := packaging.Current("", "")
	if err != nil {
		return ""
	}
	return packaging.InstalledConfig(s)
}

// serviceConfigFile is the config file named on the service's command
// line: the one asked for by --config or $AGENTMAP_CONFIG (the service does
// not inherit this shell's environment), else none, so that the daemon
// looks in the usual place.
func serviceConfigFile(flagValue string, c *config.Config) string {
	if flagValue == "" && os.Getenv(config.EnvConfig) == "" {
		return ""
	}
	if c.File != "" {
		return c.File
	}
	path, _ := config.Path(flagValue)
	return path
}

func cmdUninstall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("uninstall", flag.ContinueOnError)
	fl.SetOutput(stderr)
	file := fl.String("config", "", "the config file (it names the data directory)")
	dataDirFlag := fl.String("data-dir", "", "the data directory --purge removes (default: data_dir of the config)")
	purge := fl.Bool("purge", false, "also remove agentmap's entries in the data directory: every map, the state and, on macOS, the service's log files (on Linux the log is in the systemd journal, which is left alone); anything else in it stays, and with it the directory")
	dryRun := fl.Bool("dry-run", false, "print what would be removed and run, and change nothing")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap uninstall [--purge] [--config FILE] [--dry-run]")
		fmt.Fprintln(stderr, "Stops and removes the per-user service. The maps stay unless --purge.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err) // parseFlags has said what was wrong
	}
	if unexpectedArgs(fl, "uninstall", stderr) {
		return exitUsage
	}
	// Without --purge the config only names the data directory in a note,
	// and a broken config must not keep the service from being removed.
	problems := io.Discard
	if *purge {
		problems = stderr
	}
	// The data directory is the service's: reckoned in its environment.
	if env, installed := installedServiceEnv(); installed {
		defer applyEnv(env)()
	}
	// The installed service's config file names its data directory, when
	// none is given here (see installedConfig).
	if *file == "" && os.Getenv(config.EnvConfig) == "" {
		if kept := installedConfig(); kept != "" {
			if _, err := os.Stat(kept); err == nil {
				*file = kept
			}
		}
	}
	dataDir := config.Default().DataDir
	c, code := loadConfig(*file, "uninstall", problems)
	switch {
	case *dataDirFlag != "":
		dataDir = *dataDirFlag
	case c != nil:
		dataDir = c.DataDir
	case *purge:
		// Purging the wrong directory is not an option.
		fmt.Fprintln(stderr, "agentmap uninstall: --purge needs a config that loads, to know the data directory")
		return code
	}
	dataDirSeen(dataDir)
	// The config file in use stays even when it lies in the data
	// directory: the purge is told which it is, to keep and name it.
	cfgFile := ""
	if c != nil && c.File != "" {
		cfgFile = c.File
	} else if path, err := config.Path(*file); err == nil {
		cfgFile = path
	}
	spec, err := packaging.Current(cfgFile, dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap uninstall: %v\n", err)
		return exitFailure
	}
	plan, err := packaging.UninstallPlan(ctx, spec, *purge)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap uninstall: %v\n", err)
		return exitFailure
	}
	plan.Busy = daemonOn
	if *purge && dataDir != "" {
		if _, err := os.Stat(dataDir); errors.Is(err, fs.ErrNotExist) {
			// Not a silent purge of nothing: the data may be elsewhere.
			plan.Notes = append(plan.Notes, fmt.Sprintf("nothing to purge: the data directory %s does not exist (--config or --data-dir names another)", dataDir))
		}
		if c != nil {
			plan.Notes = append(plan.Notes, keptOutside(dataDir, c)...)
		}
	}
	if *dryRun {
		// Asked once, let go at once: the plan's listing refuses the
		// purge when nothing stops first, else a warning says it may.
		var busy error
		asked := false
		plan.Busy = func(dir string) (func(), error) {
			if !asked {
				release, err := daemonOn(dir)
				if err == nil {
					release()
				}
				busy, asked = err, true
			}
			return func() {}, busy
		}
		plan.Print(stdout)
		if busy != nil && plan.StopsFirst() {
			fmt.Fprintf(stderr, "agentmap uninstall: warning: unless it is the service's, which uninstall stops first, %v\n", busy)
		}
		return exitOK
	}
	if err := plan.Apply(ctx, packaging.ExecRunner, stdout); err != nil {
		fmt.Fprintf(stderr, "agentmap uninstall: %v\n", err)
		return exitFailure
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(stdout, n)
	}
	return exitOK
}

// daemonOn refuses to purge a data directory a daemon (or a scan) is
// running on: the daemon would stop, and under a supervisor start again
// and make the directory anew.
//
// A free directory stays held (no daemon or scan can start on it) until
// release, which the purge calls once the directory is gone.
func daemonOn(dir string) (release func(), err error) {
	release, err = daemon.Hold(dir)
	if errors.Is(err, state.ErrLocked) {
		return nil, fmt.Errorf("will not remove %s: an agentmap daemon is running on it (it holds %s locked); "+
			"stop it first (agentmap stop for the service, else end the agentmap run or scan using it), then run uninstall --purge again",
			dir, filepath.Join(dir, daemon.LockName))
	}
	return release, err
}

func cmdStart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return serviceControl(ctx, packaging.Start, args, stdout, stderr)
}

func cmdStop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return serviceControl(ctx, packaging.Stop, args, stdout, stderr)
}

func cmdRestart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return serviceControl(ctx, packaging.Restart, args, stdout, stderr)
}

func serviceControl(ctx context.Context, action string, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet(action, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: agentmap %s\n", action)
		fmt.Fprintf(stderr, "%ss the installed per-user service.\n", strings.ToUpper(action[:1])+action[1:])
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, action, stderr) {
		return exitUsage
	}
	spec, err := packaging.Current("", "")
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", action, err)
		return exitFailure
	}
	plan, err := packaging.ControlPlan(ctx, spec, action, packaging.ExecRunner)
	if err == nil {
		err = plan.Apply(ctx, packaging.ExecRunner, io.Discard)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", action, err)
		return exitFailure
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(stdout, n)
	}
	return exitOK
}

// serviceStatus is the service part of `agentmap status` and `agentmap
// doctor`: running, stopped, failed, not installed, or not supported here.
func serviceStatus() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spec, err := packaging.Current("", "")
	if err != nil {
		return "", err
	}
	st, err := packaging.Status(ctx, spec)
	if errors.Is(err, context.DeadlineExceeded) {
		return "unknown (the service manager did not answer)", nil
	}
	return st, err
}

// unjoin lists the errors an errors.Join holds (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
