// Command agentmap keeps a faithful, private record of what coding agents do
// on this machine: it follows their session logs and writes each session as a
// redacted agentplay/v1 session map.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Exit codes, documented in the README.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found problems (invalid maps, unreadable inputs)
	exitUsage   = 2 // bad flags or arguments
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"build", "build session maps from log files", cmdBuild},
		{"validate", "check session maps against agentplay/v1 and the redaction contract", cmdValidate},
		{"run", "follow every agent's logs and write maps as sessions go quiet", cmdRun},
		{"scan", "catch up on every log present, flush, and exit (run --once)", cmdScan},
		{"export", "export maps as bundles, JSON lines, AttemptDB, AgentScope or Sentience traces", cmdExport},
		{"config", "write, check or show the configuration (init|check|show)", cmdConfig},
		{"install", "install and start the per-user service (--dry-run shows what it would do)", cmdInstall},
		{"uninstall", "stop and remove the per-user service (--purge also removes the data)", cmdUninstall},
		{"start", "start the installed service", cmdStart},
		{"stop", "stop the installed service", cmdStop},
		{"restart", "restart the installed service", cmdRestart},
		{"status", "show the service, the daemon and what it follows", cmdStatus},
		{"list", "list the sessions in the map store, newest first", cmdList},
		{"show", "summarise one session's map", cmdShow},
		{"prices", "print the list prices in effect and where each comes from", cmdPrices},
		{"report", "write a self-contained HTML report of the sessions (overview and a page per session)", cmdReport},
		{"usage", "token and cost tables per day, week, month, session or model", cmdUsage},
		{"flush", "write the maps of live sessions now (ID or --all)", cmdFlush},
		{"sink", "the team database: queue status, resend everything, forget the queue, migrate, print the grants (status|resend|forget|migrate|grants)", cmdSink},
		{"doctor", "check the agent roots, the service, the data dir and the disk", cmdDoctor},
		{"logs", "print the service's log (-f follows it): the journal on Linux, rotated files on macOS", cmdLogs},
		{"version", "print the version", cmdVersion},
	}
}

// hangups holds the SIGHUPs `agentmap run` gets from the start of the
// process: a hangup asks a daemon to reload its config (a service
// manager's reload sends one), and Go's default, to end the process, would
// stop a daemon asked so in its first milliseconds, before the reload
// loop listens. Registered here for run alone; the loop takes them over.
var hangups = make(chan os.Signal, 1)

func init() {
	if name, _, rest, err := hoistGlobals(os.Args[1:]); err == nil && name == "run" && !once(rest) {
		notifyHangup(hangups)
	}
}

// once reports whether run's arguments ask for one catch-up (--once),
// which has no reload loop: a hangup ends it, as it ends scan.
func once(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, v, set := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "once" || !strings.HasPrefix(a, "-") {
			continue
		}
		b, err := strconv.ParseBool(v) // as the flag package reads a bool; the last one given wins
		on = !set || err == nil && b
	}
	return on
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks every command to stop (a daemon flushes
		// and commits); a second one ends the process at once, as in the
		// tools users know, whatever it waits in (an open of a FIFO no one
		// reads cannot be interrupted). Crash-exactness makes that safe.
		<-ctx.Done()
		stop()
	}()
	stderr := &terminalSafe{f: os.Stderr}
	code := dispatch(ctx, os.Args[1:], os.Stdout, stderr)
	stderr.flush()
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runCLI(ctx, args, stdout, stderr)
}

// completionSummary is completion's line in the usage: cobra's command,
// not one of commands().
const completionSummary = "print the shell completion script (bash, zsh or fish)"

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentmap <command> [flags]")
	fmt.Fprintln(w)
	// One column for the summaries, two spaces after the longest name,
	// whichever command it is.
	width := len("completion")
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-*s  %s\n", width, "completion", completionSummary)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Global flags, before or after the command, for the commands that take them:")
	for _, g := range globalFlags {
		fmt.Fprintf(w, "  --%-10s %s\n", g.name, g.usage)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "agentmap help COMMAND (or agentmap COMMAND -h) shows the flags of a command; agentmap --version the version.")
}
