package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/agentmap/agentmap/packaging"
	"github.com/agentmap/agentmap/packaging/logfile"
)

func cmdLogs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("logs", flag.ContinueOnError)
	fl.SetOutput(stderr)
	of := addOpsFlags(fl)
	follow := fl.Bool("f", false, "keep printing new lines as they are logged (until Ctrl-C)")
	lines := fl.Int("n", 100, "print the last N lines (0: the whole log)")
	file := fl.String("log-file", "", "read this rotated log file (as written by agentmap run --log-file) instead of the service's log")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap logs [-f] [-n N] [--log-file FILE]")
		fmt.Fprintln(stderr, "Prints the service's log: the systemd journal on Linux (journalctl --user -u agentmap),")
		fmt.Fprintln(stderr, "the size-capped, rotated files in <data dir>/logs on macOS.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return flagExit(err)
	}
	if unexpectedArgs(fl, "logs", stderr) {
		return exitUsage
	}
	if *lines < 0 {
		fmt.Fprintf(stderr, "agentmap logs: -n %d: want a number of lines, 0 or more (0: the whole log)\n", *lines)
		return exitUsage
	}
	path := *file
	if path == "" {
		switch runtime.GOOS {
		case "linux":
			if st, err := serviceStatus(); err == nil && strings.HasPrefix(st, "not installed") {
				fmt.Fprintln(stderr, "agentmap logs: the service is not installed, so the journal has no new log of it to show; "+
					"a daemon you run yourself (agentmap run) logs to its stderr, or to --log-file FILE, which agentmap logs --log-file FILE reads")
				if *follow {
					// Nothing would ever come: following would wait for good.
					return exitFailure
				}
				// The journal may still hold what an earlier install logged.
			}
			return journal(ctx, *lines, *follow, stdout, stderr)
		case "darwin":
			dataDir, code := of.resolve("logs", stderr)
			if dataDir == "" {
				return code
			}
			path = packaging.LogFile(dataDir)
		default:
			fmt.Fprintf(stderr, "agentmap logs: agentmap runs no service on %s; agentmap run logs to its stderr (or to --log-file FILE, which agentmap logs --log-file FILE reads)\n", runtime.GOOS)
			return exitFailure
		}
	}
	files := logfile.Files(path, logfile.DefaultKeep)
	if len(files) == 0 && !*follow {
		fmt.Fprintf(stderr, "agentmap logs: no log at %s yet (the service writes it once it runs)\n", path)
		return exitFailure
	}
	if err := printLast(files, *lines, stdout); err != nil {
		fmt.Fprintf(stderr, "agentmap logs: %v\n", err)
		return exitFailure
	}
	if *follow {
		if err := followFile(ctx, path, stdout); err != nil {
			fmt.Fprintf(stderr, "agentmap logs: %v\n", err)
			return exitFailure
		}
	}
	return exitOK
}

// journalArgs is the journalctl command line that shows the service's log.
func journalArgs(lines int, follow bool) []string {
	args := []string{"journalctl", "--user", "-u", packaging.UnitName + ".service", "--no-pager", "-o", "short-iso"}
	if lines > 0 {
		args = append(args, "-n", strconv.Itoa(lines))
	}
	if follow {
		args = append(args, "-f")
	}
	return args
}

// journal runs journalctl: on Linux the service's stderr goes to the
// journal of the user's systemd, and journald rotates it.
func journal(ctx context.Context, lines int, follow bool, stdout, stderr io.Writer) int {
	args := journalArgs(lines, follow)
	if _, err := exec.LookPath(args[0]); err != nil {
		fmt.Fprintln(stderr, "agentmap logs: journalctl is not installed: the service logs to the systemd journal; without systemd, run agentmap run --log-file FILE and read it with agentmap logs --log-file FILE")
		return exitFailure
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	// journalctl writes to the terminal itself (its colours and pager);
	// the journal's lines are agentmap's own, which name no log's text.
	if t, ok := stdout.(*terminalSafe); ok {
		stdout = t.f
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return exitOK // -f ended by Ctrl-C
	case errors.As(err, &ee):
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "agentmap logs: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// printLast prints the last n lines (all with n == 0) of the files, read
// in order as one log.
func printLast(files []string, n int, w io.Writer) error {
	var ring []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			ring = append(ring, sc.Text())
			if n > 0 && len(ring) > n {
				ring = ring[1:]
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	bw := bufio.NewWriter(w)
	for _, l := range ring {
		bw.WriteString(l + "\n")
	}
	return bw.Flush()
}

// followFile prints what is appended to path until ctx is done, starting
// at its current end, and follows it across rotations (the file replaced
// by a new, shorter one).
func followFile(ctx context.Context, path string, w io.Writer) error {
	var f *os.File
	var offset int64
	var ident os.FileInfo
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	if fh, err := os.Open(path); err == nil {
		f = fh
		ident, _ = fh.Stat()
		offset = ident.Size()
	}
	buf := make([]byte, 64<<10)
	// drain copies what the file gained; a failed write (stdout on a full
	// disk, a closed pipe) ends the following, which would otherwise go on
	// reading for nobody.
	drain := func() error {
		for f != nil {
			n, _ := f.ReadAt(buf, offset)
			if n <= 0 {
				return nil
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			offset += int64(n)
		}
		return nil
	}
	for {
		if err := drain(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
		fi, err := os.Stat(path)
		if err != nil {
			continue // between a rotation's renames
		}
		if f == nil || !os.SameFile(fi, ident) || fi.Size() < offset {
			if f != nil {
				err := drain() // what the old file gained before it was rotated
				f.Close()
				if err != nil {
					f = nil
					return err
				}
			}
			fh, err := os.Open(path)
			if err != nil {
				f = nil
				continue
			}
			f, offset = fh, 0
			ident, _ = fh.Stat()
		}
	}
}
