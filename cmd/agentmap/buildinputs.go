package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/opencode"
)

// The inputs of a build, however many: the paths on the command line,
// then those of a list (--inputs FILE, or - for standard input, one path
// a line, as `tar -T` and `xargs` read them), and for a directory among
// them the logs found in it. Paths go straight into the plan's compact
// table as they are read: a list of a million paths is never a million
// strings.

// buildStdin is what `--inputs -` reads (tests give their own).
var buildStdin io.Reader = os.Stdin

// maxListLine is the longest line of an --inputs list: no path is longer
// (Linux caps one at 4 KiB, Windows at 32 K characters), so a longer line
// means the file is no list of paths.
const maxListLine = 64 << 10

// give queues one input: a file as it is, a directory walked.
func (pl *buildPlan) give(path string, stderr io.Writer) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		before, failed := pl.nQueued, pl.failed
		pl.failed = false
		pl.walk(path, stderr)
		if pl.nQueued == before && !pl.failed {
			fmt.Fprintf(stderr, "agentmap build: %s: is a directory with no log of any agent in it (see agentmap help build)\n", path)
			pl.failed = true
		}
		pl.failed = pl.failed || failed
		return
	}
	// A missing or unreadable file is reported by the plan, in its turn.
	pl.queue = append(pl.queue, queued{path: pl.addPath(path)})
	pl.added()
}

// added notes an input just queued: given, as every input queued before
// the plan is. A build in pieces takes the queue to its file once it holds
// piecesFrom inputs (buildpieces.go).
func (pl *buildPlan) added() {
	pl.nGiven = len(pl.queue)
	pl.nQueued++
	if pl.pieces != nil && len(pl.queue) > piecesFrom {
		pl.pieces.take(pl)
	}
}

// given queues the paths given on a command line.
func (pl *buildPlan) given(paths []string) {
	for _, p := range paths {
		pl.give(p, io.Discard)
	}
}

// readInputList queues the paths of an --inputs list, one a line (or
// NUL-separated with null: find -print0). Empty lines are skipped and a
// carriage return before a newline is dropped; nothing else is trimmed,
// as a path may start or end with a space. An error names the list and
// the line, never what the line holds.
func (pl *buildPlan) readInputList(name string, null bool, stderr io.Writer) error {
	var r io.Reader
	label := name
	if name == "-" {
		r, label = buildStdin, "standard input"
	} else {
		fi, err := os.Stat(name)
		if err == nil && fi.IsDir() {
			return fmt.Errorf("--inputs %s: is a directory (give it as an input, without --inputs, to build the logs in it)", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("--inputs %s: %v", name, describeOpenError(err))
		}
		defer f.Close()
		r = f
	}
	sep := byte('\n')
	if null {
		sep = 0
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxListLine)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, sep); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if !null {
			line = bytes.TrimSuffix(line, []byte{'\r'})
		}
		if len(line) == 0 {
			continue
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return fmt.Errorf("--inputs %s: line %d holds a NUL byte: not a list of paths (a list from find -print0 needs --null)", label, n)
		}
		pl.give(string(line), stderr)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("--inputs %s: line %d is longer than %d KiB: not a list of paths", label, n+1, maxListLine>>10)
	case err != nil:
		return fmt.Errorf("--inputs %s: after line %d: %v", label, n, plainError(err))
	}
	return nil
}

// walk queues the logs in a directory and below it: in each directory its
// files by name, then its subdirectories by name (so a main log comes
// before the subagent files in the directory named after it). Symbolic
// links to directories are not followed, as the daemon does not: no walk
// loops. A file is taken when its name is one an agent gives its logs
// (logName), and the others that may be logs are counted (maybeLog,
// sayLeftOut); one taken that
// turns out to be no agent's log is counted, not an error. A directory
// that cannot be read is.
func (pl *buildPlan) walk(dir string, stderr io.Writer) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap build: %s: %v (the logs in it are not read)\n", dir, plainError(err))
		pl.failed = true
		// ReadDir returns what it read before the error.
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) && !strings.HasSuffix(prefix, "/") {
		prefix += string(filepath.Separator)
	}
	var subdirs []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			subdirs = append(subdirs, e.Name())
		case logName(dir, e.Name()):
			// (The directory's index is looked up for each file: a build
			// in pieces may have taken the queue and its table since.)
			pl.queue = append(pl.queue, queued{path: pl.addIn(pl.dir(prefix), e.Name()), walked: true})
			pl.added()
		case maybeLog(e.Name()) && !sidecar(e.Name(), entries):
			pl.unnamed++
		}
	}
	for _, s := range subdirs {
		pl.walk(prefix+s, stderr)
	}
}

// logName says whether a file name in dir is one the agents give their
// logs: the daemon's roots follow the same names (watchers.Root.Form), by
// where they sit in the agent's tree; a walk, which may start anywhere
// (a copy of logs, a project directory), goes by the names alone, and the
// plan then reads each one's first line for what it is.
func logName(dir, name string) bool {
	if base, n := watchers.Rotation(name); n > 0 {
		return strings.HasSuffix(base, ".jsonl") // a rotated copy of a line log
	}
	switch {
	case strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".jsonl.zst"):
		return true // every agent's line logs; Codex's compressed rollouts
	case strings.HasSuffix(name, ".json"):
		// Codex's first rollouts, Gemini CLI's older chats, a session of
		// OpenCode's JSON storage; other JSON (settings, todos) is not.
		return strings.HasPrefix(name, "rollout-") || strings.HasPrefix(name, "session-") ||
			opencode.IsStorageSession(filepath.Join(dir, name))
	case name == "state.vscdb", name == "store.db": // Cursor's databases
		return true
	case name == "opencode.db", strings.HasPrefix(name, "opencode-") && strings.HasSuffix(name, ".db"):
		return true
	}
	return false
}

// maybeLog says whether a file a walk leaves out by its name is of a kind
// an agent's log is (lines, a compressed rollout, a database): a copy of
// logs renamed. Those are counted (sayLeftOut); text files, settings and
// the tool outputs Claude Code keeps beside its transcripts are no logs,
// and advice to build them would fail.
func maybeLog(name string) bool {
	for _, ext := range []string{".jsonl", ".zst", ".vscdb", ".db", ".sqlite"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// sidecar reports whether a file is read along with a log beside it, and
// so not left out: a Claude subagent's agent-ID.meta.json beside its
// agent-ID.jsonl (entries are its directory's, sorted by name).
func sidecar(name string, entries []os.DirEntry) bool {
	base, ok := strings.CutSuffix(name, ".meta.json")
	if !ok {
		return false
	}
	_, found := slices.BinarySearchFunc(entries, base+".jsonl", func(e os.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
	return found
}

// sayLeftOut says, in one line, how many files found in the directories
// given were left out by their names: a copy of logs renamed (Cursor's
// databases as PROJECT__state.vscdb) would otherwise build fewer maps than
// its files named one by one, in silence. Counts only: no file is named.
func sayLeftOut(stderr io.Writer, unnamed int) {
	if unnamed == 0 {
		return
	}
	names := "their names are"
	if unnamed == 1 {
		names = "its name is"
	}
	fmt.Fprintf(stderr, "agentmap build: %s found in the directories left out: %s none an agent gives its logs (give such a file as an argument to build it)\n",
		counted(unnamed, "file"), names)
}

// plainError is an error of the file system without the path it names
// (the message names it already).
func plainError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return describeOpenError(pe.Err)
	}
	return describeOpenError(err)
}
