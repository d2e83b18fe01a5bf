package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/packaging"
	"github.com/agentmap/agentmap/state/datadir"
	"github.com/agentmap/agentmap/watchers"
)

// check is one line of `agentmap doctor`.
type check struct {
	Level string `json:"level"` // ok, info, warn, fail
	Topic string `json:"topic"`
	Msg   string `json:"message"`
}

const (
	levelOK   = "ok"
	levelInfo = "info"
	levelWarn = "warn"
	levelFail = "fail"
)

// lowDisk is the free space under which doctor warns: maps are small, but
// a catch-up writes many and the state database grows with the logs.
const lowDisk = 1 << 30

// defaultCleanupDays is Claude Code's cleanupPeriodDays when unset.
const defaultCleanupDays = 30

// Cleanup periods: under shortCleanupDays a week or two without agentmap
// running loses sessions for good (a warning); under longCleanupDays
// the maps stay but old logs cannot be rebuilt (worth knowing, not a
// problem); a year or more is plenty.
const (
	shortCleanupDays = 14
	longCleanupDays  = 365
)

func cmdDoctor(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	asJSON := fl.Bool("json", false, "print the checks as JSON")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap doctor [--config FILE] [--data-dir DIR] [--json]")
		fmt.Fprintln(stderr, "Checks the agent roots, the service, the data directory, Claude Code's and Gemini CLI's chat cleanup, the team database's url_file and free disk.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, "doctor", stderr) {
		return exitUsage
	}
	var checks []check
	c, _ := loadConfig(*of.config, "doctor", stderr)
	if c == nil {
		checks = append(checks, check{levelFail, "config", "the config file has problems (listed above); the defaults are checked instead"})
		c = config.Default()
		// The data directory the file names, if its problems leave it
		// known: a running daemon, which kept its configuration, is there.
		if path, err := config.Path(*of.config); err == nil {
			if dir, ok, _ := config.DataDirOf(path); ok {
				c.DataDir = dir
				checks[len(checks)-1].Msg = "the config file has problems (listed above); the defaults are checked instead, with the data directory it names"
			}
		}
	} else if c.File == "" {
		checks = append(checks, check{levelOK, "config", "no config file: the defaults are in effect"})
	} else {
		checks = append(checks, check{levelOK, "config", c.File + " is valid"})
	}
	if *of.dataDir != "" {
		c.DataDir = *of.dataDir
	}
	dataDirSeen(c.DataDir)
	roots := daemon.RootsFromConfig(c)
	if len(roots) == 0 && noHome() {
		checks = append(checks, check{levelWarn, "agents", "no agent's logs to follow: " + homeVar() + " is not set, and the agents keep their logs under it"})
	}
	checks = append(checks, rootChecks(roots, c)...)
	if ch, ok := openCodeDBCheck(os.Getenv("OPENCODE_DB"), c.Agents.OpenCode.Enabled); ok {
		checks = append(checks, ch)
	}
	st, err := serviceStatus()
	checks = append(checks, serviceCheck(st, err, c.DataDir != "" && daemonAnswers(c.DataDir), userManager()))
	if ch, ok := serviceEnvCheck(c, *of.config, *of.dataDir != "", os.Getenv); ok {
		checks = append(checks, ch)
	}
	if ch, ok := watchingCheck(c.DataDir); ok {
		checks = append(checks, ch)
	}
	if c.DataDir == "" { // the defaults without a home (homeless)
		checks = append(checks, check{levelFail, "data", errNoDataDir().Error()})
	} else {
		checks = append(checks, dataDirCheck(c.DataDir, runtime.GOOS))
	}
	checks = append(checks, sinkChecks(c)...)
	home, _ := os.UserHomeDir()
	checks = append(checks, cleanupCheck(claudeSettings(home, os.Getenv("CLAUDE_CONFIG_DIR")), c.Agents.Claude.Enabled))
	checks = append(checks, geminiCleanupCheck(geminiSettings(home, os.Getenv("GEMINI_CLI_HOME")), c.Agents.Gemini.Enabled))
	if c.DataDir != "" {
		free, err := freeDisk(existingAncestor(c.DataDir))
		checks = append(checks, diskCheck(free, err))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(checks)
	} else {
		for _, ch := range checks {
			fmt.Fprintf(stdout, "%-4s  %-8s %s\n", ch.Level, ch.Topic, ch.Msg)
		}
		fmt.Fprintln(stdout, verdict(checks))
	}
	for _, ch := range checks {
		if ch.Level == levelFail {
			return exitFailure
		}
	}
	return exitOK
}

// rootChecks says, per configured root, whether it is there and readable.
func rootChecks(roots []watchers.Root, c *config.Config) []check {
	var out []check
	for _, name := range config.AgentNames {
		if a, _ := c.Agents.ByName(name); a != nil && !a.Enabled {
			out = append(out, check{levelInfo, name, "disabled in the config"})
		}
	}
	for _, r := range roots {
		topic := r.Agent
		fi, err := os.Stat(r.Dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, check{levelInfo, topic, r.Dir + " does not exist (yet): it is picked up when it appears"})
		case err != nil:
			out = append(out, check{levelWarn, topic, r.Dir + ": " + err.Error()})
		case !fi.IsDir():
			out = append(out, check{levelWarn, topic, r.Dir + " is not a directory"})
		default:
			f, err := os.Open(r.Dir)
			if err == nil {
				_, err = f.Readdirnames(1)
				f.Close()
			}
			if err != nil && !errors.Is(err, io.EOF) {
				out = append(out, check{levelWarn, topic, r.Dir + " is not readable: " + err.Error()})
			} else {
				out = append(out, check{levelOK, topic, r.Dir + " exists and is readable"})
			}
		}
	}
	return out
}

// verdict is doctor's last line: green when nothing warns or fails.
func verdict(checks []check) string {
	n := map[string]int{}
	for _, ch := range checks {
		n[ch.Level]++
	}
	if n[levelWarn] == 0 && n[levelFail] == 0 {
		return "all good: no warnings, no failures"
	}
	return counted(n[levelWarn], "warning") + ", " + counted(n[levelFail], "failure")
}

// daemonAnswers reports whether a daemon answers on dataDir's control socket.
func daemonAnswers(dataDir string) bool {
	_, err := daemon.Connect(dataDir)
	return err == nil
}

// watchingCheck asks a running daemon whether file notifications cover
// every directory it follows: a limit reached (inotify's watch limit, most
// often) leaves new logs to the rescans, minutes late, which nothing else
// shows. ok is false when no daemon answers or it watches everything.
func watchingCheck(dataDir string) (check, bool) {
	if dataDir == "" {
		return check{}, false
	}
	cl, err := daemon.Connect(dataDir)
	if err != nil {
		return check{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := cl.Status(ctx)
	if err != nil || st.Notifications == "" {
		return check{}, false
	}
	return check{levelWarn, "watching", st.Notifications}, true
}

// userManager is nil when the user's service manager can run the service,
// else why not and what to do instead.
func userManager() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spec, err := packaging.Current("", "")
	if err != nil {
		return err
	}
	return packaging.UserManager(ctx, spec)
}

// serviceCheck turns the service's state into advice that works here: a
// daemon the user runs themselves is as good as the service, and install
// is not recommended where no user service manager would start it.
func serviceCheck(st string, err error, daemonRuns bool, manager error) check {
	switch {
	case err != nil:
		return check{levelWarn, "service", "cannot ask the service manager: " + err.Error()}
	case st == "running":
		return check{levelOK, "service", "installed and running"}
	case strings.HasPrefix(st, "running ("):
		return check{levelOK, "service", st}
	case daemonRuns:
		return check{levelOK, "service", "a daemon is running (agentmap run); the service is " + st}
	case strings.HasPrefix(st, "not installed") && manager == nil:
		return check{levelWarn, "service", "not installed: agentmap install sets it up (or run agentmap run yourself)"}
	case strings.HasPrefix(st, "not installed"):
		return check{levelWarn, "service", "not installed, and agentmap install cannot start it here: " + manager.Error()}
	case strings.HasPrefix(st, "not supported"):
		return check{levelInfo, "service", st + "; run agentmap run under the supervisor you use"}
	}
	return check{levelWarn, "service", st}
}

// dataDirCheck wants the data dir private: 0700, as the daemon creates it.
// What scan and run refuse (the directory or a file of agentmap's in it
// writable by others, not the user's, a symbolic link) is a failure, as
// the daemon will not start there; readable by others only a warning.
func dataDirCheck(dir, goos string) check {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return check{levelInfo, "data", dir + " does not exist yet: the daemon creates it (0700)"}
	case err != nil:
		return check{levelFail, "data", dir + ": " + err.Error()}
	case !fi.IsDir():
		return check{levelFail, "data", dir + " is not a directory"}
	}
	if err := datadir.Check(dir); err != nil {
		return check{levelFail, "data", "scan and run refuse it: " + err.Error()}
	}
	// A state database that is no file (a directory, a FIFO put there)
	// is refused by scan and run, and never moved aside: it is not
	// damage, and not agentmap's to move.
	state := filepath.Join(dir, "state.db")
	if fi, err := os.Lstat(state); err == nil && !fi.Mode().IsRegular() {
		return check{levelFail, "data", state + " is not a regular file: scan and run refuse to start; move it away"}
	}
	if goos == "windows" {
		return check{levelOK, "data", dir + " exists"}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return check{levelWarn, "data", fmt.Sprintf("%s is mode %04o; want 0700 (chmod 700 %s): the state names your log files",
			dir, perm, dir)}
	}
	return check{levelOK, "data", dir + " is private (0700)"}
}

// claudeSettings lists the settings files Claude Code reads its
// cleanupPeriodDays from: each directory of $CLAUDE_CONFIG_DIR, else
// ~/.claude.
func claudeSettings(home, env string) []string {
	var out []string
	for _, d := range strings.Split(env, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, filepath.Join(d, "settings.json"))
		}
	}
	if len(out) == 0 && home != "" {
		out = append(out, filepath.Join(home, ".claude", "settings.json"))
	}
	return out
}

// cleanupCheck reads cleanupPeriodDays: Claude Code deletes transcripts
// older than it at start-up, after which only agentmap's maps remain.
func cleanupCheck(files []string, enabled bool) check {
	if !enabled {
		return check{levelInfo, "cleanup", "Claude Code is disabled in the config"}
	}
	days, from := defaultCleanupDays, ""
	for _, f := range files {
		n, ok, err := readCleanupDays(f)
		if err != nil {
			return check{levelWarn, "cleanup", f + ": " + err.Error()}
		}
		if ok {
			days, from = n, f
			break
		}
	}
	src := "the default"
	if from != "" {
		src = "cleanupPeriodDays in " + from
	}
	switch {
	case days < shortCleanupDays:
		return check{levelWarn, "cleanup", fmt.Sprintf(
			"Claude Code deletes transcripts older than %d days (%s): sessions from a time agentmap was not running are lost; set cleanupPeriodDays to %d or more in %s",
			days, src, defaultCleanupDays, files[0])}
	case days < longCleanupDays:
		return check{levelInfo, "cleanup", fmt.Sprintf(
			"Claude Code deletes transcripts older than %d days (%s); their maps remain, but cannot be rebuilt from the logs after that",
			days, src)}
	}
	return check{levelOK, "cleanup", fmt.Sprintf("Claude Code keeps transcripts for %d days (%s)", days, src)}
}

// readCleanupDays reads one settings file's cleanupPeriodDays; ok is false
// when the file or the key is absent. Nothing else of the file is decoded.
func readCleanupDays(path string) (days int, ok bool, err error) {
	data, err := regular.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var s struct {
		Cleanup *float64 `json:"cleanupPeriodDays"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, false, errors.New("not valid JSON")
	}
	if s.Cleanup == nil {
		return 0, false, nil
	}
	return int(*s.Cleanup), true, nil
}

func diskCheck(free uint64, err error) check {
	switch {
	case err != nil:
		return check{levelWarn, "disk", "cannot read the free space: " + err.Error()}
	case free < lowDisk:
		return check{levelWarn, "disk", fmt.Sprintf("%s free where the data lives: maps stop being written when it runs out (they are retried)", mb(int64(free)))}
	}
	return check{levelOK, "disk", fmt.Sprintf("%.1f GB free where the data lives", float64(free)/1e9)}
}

// existingAncestor is dir or its nearest existing parent.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
