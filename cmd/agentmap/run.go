package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// rootFlags collects --root agent=DIR overrides.
type rootFlags map[string][]string

func (r rootFlags) String() string { return "" }

func (r rootFlags) Set(v string) error {
	agent, dir, ok := strings.Cut(v, "=")
	switch {
	case !ok || dir == "":
		return errors.New("want agent=DIR")
	case agent != watchers.LayoutClaude && agent != watchers.LayoutCodex &&
		agent != watchers.LayoutCursor && agent != watchers.LayoutCursorApp:
		return fmt.Errorf("unknown agent %q (claude, codex, cursor or cursor-app)", agent)
	}
	r[agent] = append(r[agent], dir)
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	env := watchers.OSEnv(runtime.GOOS)
	dataDir := fl.String("data-dir", daemon.DefaultDataDir(env), "where state.db and maps/ live")
	idle := fl.Duration("idle", daemon.DefaultIdle, "write a session's map once it has been quiet this long")
	once := fl.Bool("once", false, "catch up on every log present, write every map, and exit")
	maxLine := fl.Int("max-line", watchers.DefaultMaxLine, "skip (and count) log lines longer than this many bytes")
	level := fl.String("log-level", "", "debug, info, warn or error (default info; warn with --once)")
	rescan := fl.Duration("rescan", daemon.DefaultRescan, "period of the full stat rescan behind file notifications")
	debounce := fl.Duration("debounce", daemon.DefaultDebounce, "quiet time gathering file notifications before reading")
	roots := rootFlags{}
	xf := addExportFlags(fl)
	fl.Var(roots, "root", "follow this directory instead of the agent's default roots: agent=DIR (claude, codex, cursor, cursor-app); repeatable")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap run [flags]")
		fmt.Fprintln(stderr, "Follows every agent's logs and writes a session's map when it goes quiet; stops on SIGINT or SIGTERM.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fl.Usage()
		return exitUsage
	}
	lvl := slog.LevelInfo
	if *once {
		lvl = slog.LevelWarn
	}
	if *level != "" {
		if err := lvl.UnmarshalText([]byte(*level)); err != nil {
			fmt.Fprintf(stderr, "agentmap run: unknown log level %q\n", *level)
			return exitUsage
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	opt := daemon.Options{
		DataDir: *dataDir, Idle: *idle, Once: *once, MaxLine: *maxLine, Logger: logger,
		Roots:  watchers.OverrideRoots(watchers.DefaultRoots(env), roots),
		Rescan: *rescan, Debounce: *debounce, Producer: producer(),
	}
	xf.apply(fl, &opt.Export, *dataDir)
	var bar *progress
	if *once {
		bar = newProgress(stderr)
		opt.Progress = bar.update
	}
	err := daemon.New(opt).Run(ctx)
	if bar != nil {
		bar.finish()
	}
	switch {
	case errors.Is(err, state.ErrLocked):
		fmt.Fprintf(stderr, "agentmap run: %v\n", err)
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "agentmap run: %v\n", err)
		return exitFailure
	}
	if *once {
		fmt.Fprintf(stdout, "maps in %s\n", daemon.MapsDir(*dataDir))
	}
	return exitOK
}

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdRun(ctx, append([]string{"--once"}, args...), stdout, stderr)
}

// progress shows a catch-up: a bar redrawn in place on a terminal, a plain
// line every 10% otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	last     time.Time
	lastPct  int
	done     int64
	total    int64
	sessions int
	drawn    bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, lastPct: -10}
	if f, ok := w.(*os.File); ok {
		p.tty = isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
	}
	return p
}

func (p *progress) update(done, total int64, sessions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total, p.sessions = done, total, sessions
	pct := 100
	if total > 0 {
		pct = int(min(done, total) * 100 / total)
	}
	if p.tty {
		if time.Since(p.last) < 100*time.Millisecond && pct != 100 {
			return
		}
		p.last = time.Now()
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(p.w, "\rscan [%s%s] %3d%%  %s / %s  %d sessions ",
			strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, mb(done), mb(total), sessions)
		p.drawn = true
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		fmt.Fprintf(p.w, "scan: %d%% (%s of %s, %d sessions)\n", pct, mb(done), mb(total), sessions)
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "scan: done, %s read, %d sessions\n", mb(p.done), p.sessions)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
