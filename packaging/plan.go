package packaging

import (
	"bytes"
	"context"
	"fmt"
	"github.com/agentmap/agentmap/state/datadir"
	"github.com/agentmap/agentmap/state/durable"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Op is what one step of a plan does.
type Op int

const (
	Mkdir  Op = iota // create a directory (and its parents) with Mode
	Write            // write Content to Path atomically with Mode
	Remove           // remove the file at Path
	Purge            // remove agentmap's entries in the data directory at Path, then it if left empty
	Run              // run Args; MayFail steps are allowed to fail
)

// Step is one change to the machine.
type Step struct {
	Op      Op
	Path    string
	Mode    fs.FileMode
	Content []byte
	Args    []string
	// MayFail marks commands that fail harmlessly when there is nothing
	// for them to do (stopping a service that is not running).
	MayFail bool
	// Retry marks commands that may fail for a moment after the previous
	// one (launchd finishing a bootout before a bootstrap).
	Retry bool
	// Keep is, for Purge, the config file in use, which stays even when
	// it lies in the data directory.
	Keep string
}

// Plan is the ordered list of steps of an install, an uninstall or a
// service control, with notes for the user. It is computed by reading the
// machine's state only, so that printing it (--dry-run) touches nothing.
type Plan struct {
	Steps []Step
	Notes []string
	// Busy, when set, says why the directory a Purge step removes must
	// stay: a process still using it. It is asked when the step comes,
	// after the steps before it have stopped the service, whose daemon
	// is then gone. When the directory is free, release (never nil then)
	// is called once it is removed: Busy may hold the directory until
	// then, so that nothing starts on it in between. (The daemon's lock is
	// the daemon package's, which imports this one: the caller brings the
	// check.)
	Busy func(dir string) (release func(), err error)
}

func (p *Plan) mkdir(path string) {
	if _, err := os.Stat(path); err != nil {
		p.Steps = append(p.Steps, Step{Op: Mkdir, Path: path, Mode: 0o700})
	}
}

func (p *Plan) write(path string, mode fs.FileMode, content []byte) {
	p.Steps = append(p.Steps, Step{Op: Write, Path: path, Mode: mode, Content: content})
}

func (p *Plan) run(args ...string) { p.Steps = append(p.Steps, Step{Op: Run, Args: args}) }

func (p *Plan) runMayFail(args ...string) {
	p.Steps = append(p.Steps, Step{Op: Run, Args: args, MayFail: true})
}

// Print writes the plan as --dry-run shows it: every file with its full
// content, every command as it would be run.
func (p *Plan) Print(w io.Writer) {
	if len(p.Steps) == 0 {
		fmt.Fprintln(w, "nothing to do")
	}
	for _, s := range p.Steps {
		switch s.Op {
		case Mkdir:
			fmt.Fprintf(w, "would create directory %s (mode %04o)\n", s.Path, s.Mode)
		case Write:
			fmt.Fprintf(w, "would write %s (mode %04o):\n", s.Path, s.Mode)
			fmt.Fprintln(w, "-----")
			w.Write(s.Content)
			if !bytes.HasSuffix(s.Content, []byte("\n")) {
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, "-----")
		case Remove:
			fmt.Fprintf(w, "would remove %s\n", s.Path)
		case Purge:
			if err := purgeable(s); err != nil {
				fmt.Fprintf(w, "would refuse: %v\n", err)
				continue
			}
			release, err := p.busy(s)
			if err == nil {
				release()
			} else if !p.StopsFirst() {
				fmt.Fprintf(w, "would refuse: %v\n", err)
				continue
			}
			printPurge(w, s)
		case Run:
			suffix := ""
			if s.MayFail {
				suffix = "   (a failure is ignored)"
			}
			fmt.Fprintf(w, "would run: %s%s\n", shellJoin(s.Args), suffix)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// busy is Busy for a Purge step; without Busy, nothing is held.
func (p *Plan) busy(s Step) (release func(), err error) {
	if p.Busy == nil {
		return func() {}, nil
	}
	return p.Busy(s.Path)
}

// StopsFirst reports whether the plan runs the service manager before it
// purges: a daemon found on the directory by a dry run may be the
// service's, which would be stopped by then.
func (p *Plan) StopsFirst() bool {
	for _, s := range p.Steps {
		switch s.Op {
		case Run:
			return true
		case Purge:
			return false
		}
	}
	return false
}

// printPurge says what a Purge step would remove and what it would leave.
// Only agentmap's own entries go: whatever else the user put in the
// directory stays, and with it the directory.
func printPurge(w io.Writer, s Step) {
	owned, kept, err := datadir.Contents(s.Path, s.Keep)
	if err != nil {
		fmt.Fprintf(w, "would refuse: %v\n", err)
		return
	}
	dir := s.Path
	target, _ := filepath.EvalSymlinks(s.Path)
	link := target != "" && target != filepath.Clean(s.Path)
	if link {
		dir = target
		if !filepath.IsAbs(dir) {
			dir, _ = filepath.Abs(dir)
		}
	}
	if len(owned) > 0 {
		fmt.Fprintf(w, "would remove from %s: %s\n", dir, strings.Join(owned, ", "))
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "would keep in %s: %s (not agentmap's%s); the directory stays\n", dir, strings.Join(kept, ", "), configNote(s.Keep, kept))
		return
	}
	fmt.Fprintf(w, "would remove the directory %s, then empty\n", dir)
	if link {
		fmt.Fprintf(w, "would remove the symbolic link %s, which would lead nowhere\n", s.Path)
	}
}

// reportPurge says what a Purge step removed and what it left.
func reportPurge(w io.Writer, r datadir.Result, keep string) {
	dir := r.Dir
	if r.Target != "" {
		dir = r.Target
	}
	if len(r.Owned) > 0 {
		fmt.Fprintf(w, "removed from %s: %s\n", dir, strings.Join(r.Owned, ", "))
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(w, "kept in %s: %s (not agentmap's%s); the directory stays\n", dir, strings.Join(r.Kept, ", "), configNote(keep, r.Kept))
	}
	if r.DirGone {
		fmt.Fprintf(w, "removed %s\n", dir)
	} else if len(r.Kept) == 0 && r.Owned != nil {
		fmt.Fprintf(w, "kept %s: something was put in it meanwhile\n", dir)
	}
	if r.LinkGone {
		fmt.Fprintf(w, "removed the symbolic link %s, which led to it\n", r.Dir)
	} else if r.Target != "" && len(r.Kept) > 0 {
		fmt.Fprintf(w, "kept the symbolic link %s, which leads to it\n", r.Dir)
	}
}

// configNote names the config file among the entries kept.
func configNote(keep string, kept []string) string {
	if keep == "" {
		return ""
	}
	for _, k := range kept {
		if strings.TrimSuffix(k, "/") == filepath.Base(keep) {
			return "; " + k + " is your config file"
		}
	}
	return ""
}

func purgeable(s Step) error {
	home, _ := os.UserHomeDir()
	return datadir.Purgeable(s.Path, home, s.Keep)
}

// How a Retry step is retried.
var (
	retries    = 5
	retryPause = 500 * time.Millisecond
)

// Runner runs a command and returns its combined output. Tests replace it.
type Runner func(ctx context.Context, args ...string) ([]byte, error)

// ExecRunner runs commands for real.
func ExecRunner(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
}

// Apply carries out the plan, reporting each step on w. It stops at the
// first step that fails (MayFail commands excepted).
func (p *Plan) Apply(ctx context.Context, run Runner, w io.Writer) error {
	for _, s := range p.Steps {
		switch s.Op {
		case Mkdir:
			if err := os.MkdirAll(s.Path, s.Mode); err != nil {
				return fmt.Errorf("create %s: %w", s.Path, err)
			}
			fmt.Fprintf(w, "created %s\n", s.Path)
		case Write:
			if err := durable.WriteFile(s.Path, s.Content, s.Mode); err != nil {
				return fmt.Errorf("write %s: %w", s.Path, err)
			}
			fmt.Fprintf(w, "wrote %s\n", s.Path)
		case Remove:
			if err := os.Remove(s.Path); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove %s: %w", s.Path, err)
			}
			fmt.Fprintf(w, "removed %s\n", s.Path)
		case Purge:
			// Only a directory agentmap made, in a place that can be
			// one: never the home directory, /, or the config's.
			if err := purgeable(s); err != nil {
				return err
			}
			release, err := p.busy(s)
			if err != nil {
				return err
			}
			r, err := datadir.Purge(s.Path, s.Keep)
			release()
			reportPurge(w, r, s.Keep)
			if err != nil {
				return err
			}
		case Run:
			out, err := run(ctx, s.Args...)
			for i := 0; err != nil && s.Retry && i < retries; i++ {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(retryPause):
				}
				out, err = run(ctx, s.Args...)
			}
			if err != nil && !s.MayFail {
				return fmt.Errorf("%s failed: %v%s", shellJoin(s.Args), err, firstLines(out))
			}
			fmt.Fprintf(w, "ran: %s\n", shellJoin(s.Args))
		}
	}
	return nil
}

// firstLines keeps the start of a service manager's answer for an error
// message: enough to see why it refused.
func firstLines(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return ": " + strings.Join(lines, " / ")
}

// shellJoin prints a command so that it can be pasted into a shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
