package main

import (
	"bytes"
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

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/state/durable"
	"github.com/agentmap/agentmap/state/mapstore"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/agents"
)

func cmdBuild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("build", flag.ContinueOnError)
	fl.SetOutput(stderr)
	agentFlag := fl.String("agent", "auto", "agent of the inputs: auto, claude, codex, cursor, opencode, copilot or gemini")
	mode := fl.String("path-mode", "relative", "path mode: relative, dirs_only or hashed")
	keyFile := fl.String("hash-key-file", "", "key for hashed mode (created with 32 random bytes, 0600, if missing)")
	out := fl.String("o", ".", "output: a directory (one <native id>.json.gz per session), a .json.gz file, a device or a FIFO (/dev/stdout, /dev/null: one session), or - for pretty JSON on stdout")
	session := fl.String("session", "", "build only the session with this native id, or the one whose id it is a unique prefix of")
	eventCap := fl.Int("event-cap", builder.DefaultEventCap, "most events kept in a map")
	inputs := fl.String("inputs", "", "read more inputs from this list, one path a line (- for standard input): log files or directories, after those given as arguments")
	null := fl.Bool("null", false, "the --inputs list is separated by NUL bytes (find -print0), not by lines")
	configFile := fl.String("config", "", "take the map options (path mode, hash key, event cap, prices) from this config file, as the daemon does; flags override it")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap build [flags] FILE|DIR...")
		fmt.Fprintln(stderr, "Builds agentplay/v1 session maps from Claude Code, Codex, Cursor, OpenCode, Copilot CLI or Gemini CLI logs.")
		fmt.Fprintln(stderr, "A directory is searched for the logs in it; --inputs LIST reads paths from a file or standard input.")
		fl.PrintDefaults()
	}
	if err := parseFlags(fl, interspersed(fl, args)); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 && *inputs == "" {
		fmt.Fprintln(stderr, "agentmap build: name the logs to build: files or directories, or --inputs LIST (see agentmap help build)")
		return exitUsage
	}
	if *eventCap < 1 || *eventCap > config.MaxEventCap {
		// As maps.event_cap: refused here, not by every session's build.
		fmt.Fprintf(stderr, "agentmap build: --event-cap must be between 1 and %d\n", config.MaxEventCap)
		return exitUsage
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts, exclude, code := buildOptions(set, *configFile, *mode, *keyFile, *eventCap, stderr)
	if code != exitOK {
		return code
	}
	if *agentFlag != "auto" {
		if _, ok := agents.ByName(*agentFlag); !ok {
			fmt.Fprintf(stderr, "agentmap build: unknown agent %q (auto, claude, codex, cursor, opencode, copilot or gemini)\n", *agentFlag)
			return exitUsage
		}
	}

	pl := &buildPlan{exclude: exclude}
	// A device or a FIFO is one file whatever its name (/dev/null, the
	// /dev/fd/63 of the shell's >(...)), written through as report -o and
	// export --out write it; only a name that may still become a
	// directory is read by its ending.
	toDir := *out != "-" && !strings.HasSuffix(*out, ".json.gz") && !durable.WritesThrough(*out)
	if toDir {
		// Many inputs are built in pieces (buildpieces.go).
		pl.pieces = newInputPieces(*agentFlag)
		defer pl.pieces.close()
	}
	gc := paceBuildGC()
	defer gc.done()
	for _, p := range fl.Args() {
		pl.give(p, stderr)
	}
	if *inputs != "" {
		if err := pl.readInputList(*inputs, *null, stderr); err != nil {
			// A list read in part would build some of what was asked:
			// nothing is built.
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			return exitFailure
		}
	} else if *null {
		fmt.Fprintln(stderr, "agentmap build: --null applies to the list of --inputs")
		return exitUsage
	}
	if pl.pieces != nil && (pl.pieces.n > 0 || pl.pieces.err != nil) {
		b := &streamBuild{opts: opts, stderr: stderr, failed: pl.failed, session: *session}
		return buildInPieces(ctx, pl.pieces, b, gc, *agentFlag, *out, exclude, pl)
	}
	planBuild(ctx, pl, *agentFlag, stderr)
	gc.planned()
	sayLeftOut(stderr, pl.unnamed)
	if pl.skipped > 0 {
		fmt.Fprintf(stderr, "agentmap build: %s found in the directories %s of no agent: skipped\n", counted(pl.skipped, "file"), isAre(pl.skipped, "a log", "logs"))
	}
	if pl.keptOut > 0 {
		fmt.Fprintf(stderr, "agentmap build: %s kept out by the config's privacy.exclude\n", counted(pl.keptOut, "log"))
	}
	if *session != "" {
		m := newSessionMatch(*session)
		m.add(pl)
		id, err := m.id()
		switch {
		case errors.Is(err, errNoSessionMatch):
			fmt.Fprintf(stderr, "agentmap build: no session %q in the inputs\n", *session)
			return exitFailure
		case err != nil:
			fmt.Fprintf(stderr, "agentmap build: --session: %v\n", err)
			return exitUsage
		}
		*session = id
	}
	var sessions []int32
	for i := range pl.sessions {
		if *session == "" || pl.strs.get(pl.sessions[i].native) == *session {
			sessions = append(sessions, int32(i))
		}
	}
	if len(sessions) == 0 {
		if !pl.failed {
			fmt.Fprintln(stderr, "agentmap build: the inputs hold no session")
		}
		return exitFailure
	}
	b := &streamBuild{plan: pl, opts: opts, stderr: stderr, failed: pl.failed, session: *session}
	switch {
	case *out == "-":
		return b.toStdout(sessions, stdout)
	case !toDir:
		return b.toFile(sessions, *out)
	}
	if code := checkBuildOutput(*out, false, stderr); code != exitOK {
		return code
	}
	return b.end(b.intoDir(sessions, *out))
}

// buildOptions are the map options of a build: the flags, over the map
// options of a config file when one is given, so that `build --config F`
// writes the same bytes as a daemon running with F; and F's
// privacy.exclude (nil without patterns), which keeps logs out of the
// build as the daemon keeps them out.
func buildOptions(set map[string]bool, configFile, mode, keyFile string, eventCap int, stderr io.Writer) (opts builder.Options, exclude func(string) bool, code int) {
	opts = builder.Options{PathMode: redact.Mode(mode), EventCap: eventCap, Producer: producer()}
	var c *config.Config
	if configFile != "" {
		if c, code = loadConfig(configFile, "build", stderr); code != exitOK {
			return opts, nil, code
		}
		if len(c.Privacy.Exclude) > 0 {
			exclude = c.Excluded
		}
		if !set["path-mode"] {
			mode = c.Maps.PathMode
		}
	}
	switch redact.Mode(mode) {
	case redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed:
	default:
		fmt.Fprintf(stderr, "agentmap build: unknown path mode %q (relative, dirs_only or hashed)\n", mode)
		return opts, nil, exitUsage
	}
	if c != nil {
		if set["hash-key-file"] {
			c.Maps.HashKeyFile = keyFile
		}
		if set["event-cap"] {
			c.Maps.EventCap = eventCap
		}
		o, err := builderOptions(c, mode)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			return opts, nil, exitFailure
		}
		return o, exclude, exitOK
	}
	opts.PathMode = redact.Mode(mode)
	if opts.PathMode == redact.ModeHashed && keyFile == "" {
		// Documented, but a user who asked for hashed paths should not
		// have to open a map to learn that file names were kept apart
		// only as dirs_only does.
		fmt.Fprintln(stderr, "agentmap build: --path-mode hashed needs a key (--hash-key-file FILE, created if missing); without one the maps use dirs_only")
	}
	if opts.PathMode == redact.ModeHashed && keyFile != "" {
		// A key file is created if missing, but not a directory for it: a
		// typo in the path would leave a secret where nobody looks.
		if !outputDirExists("build", "--hash-key-file", keyFile, stderr) {
			return opts, nil, exitFailure
		}
		key, err := config.LoadOrCreateHashKey(keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			return opts, nil, exitFailure
		}
		opts.HashKey = key
	}
	return opts, nil, exitOK
}

// notALog starts the error of a file no agent wrote.
const notALog = "not a log of Claude Code, Codex, Cursor, OpenCode, Copilot CLI or Gemini CLI"

// pickAgent returns the agent of a line log by the --agent flag or its
// first line. A named agent that also wrote whole-document logs comes
// back with ok false (and its Whole set) when the first line opens one.
func pickAgent(name string, first []byte) (agents.Agent, bool) {
	if name != "auto" {
		a, _ := agents.ByName(name)
		if a.Whole && !a.LooksLike(first) && agents.LooksLikeWholeJSON(first) {
			return a, false
		}
		return a, true
	}
	return agents.Detect(first)
}

func describeOpenError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	return err
}

func buildMap(s *inputSession, opts builder.Options) (*builder.Map, error) {
	m, err := builder.Build(s.all(), opts)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.native, err)
	}
	return m, nil
}

// streamBuild reads, builds and writes the planned sessions one after the
// other (a few at a time, on as many workers as the machine has cores),
// in plan order: its memory is that of a few sessions, however many there
// are. What each session reports is printed in that order too.
type streamBuild struct {
	plan    *buildPlan
	opts    builder.Options
	stderr  io.Writer
	failed  bool
	session string // --session, when given
}

// builtSession is one session's outcome on its way to the output.
type builtSession struct {
	said   bytes.Buffer // what reading its inputs reported
	built  bytes.Buffer // what building and encoding its map reported
	read   bool         // the inputs gave the session records
	failed bool
	native string
	data   []byte // the encoded map; nil when there is none
}

// build reads one session and encodes its map; it runs on a worker.
func (b *streamBuild) build(s int32, encode func(*builder.Map) ([]byte, error)) *builtSession {
	r := &builtSession{}
	in, ok, failed := b.plan.input(s, &r.said)
	r.read, r.failed = ok, failed
	if !ok {
		return r
	}
	m, err := buildMap(in, b.opts)
	if errors.Is(err, builder.ErrEmptySession) {
		// Nothing happened in it: no map, and no failure.
		fmt.Fprintf(&r.built, "agentmap build: session %s has no events: no map\n", in.native)
		return r
	}
	if err == nil {
		r.native = m.NativeID()
		r.data, err = encode(m)
	}
	if err != nil {
		fmt.Fprintf(&r.built, "agentmap build: %v\n", err)
		r.failed, r.data = true, nil
	}
	return r
}

// each builds the sessions on the workers and hands each outcome to emit,
// in plan order. It returns how many sessions were read.
func (b *streamBuild) each(sessions []int32, encode func(*builder.Map) ([]byte, error), emit func(*builtSession)) int {
	workers := min(len(sessions), runtime.GOMAXPROCS(0))
	// At most workers sessions are being built, and as many again wait,
	// built, for their turn.
	queue := make(chan chan *builtSession, workers)
	slots := make(chan struct{}, workers)
	go func() {
		defer close(queue)
		for _, s := range sessions {
			slots <- struct{}{}
			done := make(chan *builtSession, 1)
			queue <- done
			go func() {
				done <- b.build(s, encode)
				<-slots
			}()
		}
	}()
	read := 0
	for done := range queue {
		r := <-done
		b.failed = b.failed || r.failed
		if r.read {
			read++
		}
		emit(r)
	}
	return read
}

// end is the exit code once every session went by.
func (b *streamBuild) end(read int) int {
	if read == 0 {
		// Every log of every session failed to read past its first line.
		if b.session != "" {
			fmt.Fprintf(b.stderr, "agentmap build: no session %q in the inputs\n", b.session)
		} else if !b.failed {
			fmt.Fprintln(b.stderr, "agentmap build: the inputs hold no session")
		}
		return exitFailure
	}
	if b.failed {
		return exitFailure
	}
	return exitOK
}

func (b *streamBuild) writeErr(err error) {
	fmt.Fprintf(b.stderr, "agentmap build: %v\n", err)
	b.failed = true
}

func gzipMap(m *builder.Map) ([]byte, error) { return m.Gzip() }

// prettyMap is the map as `-o -` prints it: indented JSON and a newline.
func prettyMap(m *builder.Map) ([]byte, error) {
	canon, err := m.Canonical()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(canon, &v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (b *streamBuild) toStdout(sessions []int32, stdout io.Writer) int {
	read := b.each(sessions, prettyMap, func(r *builtSession) {
		b.stderr.Write(r.said.Bytes())
		b.stderr.Write(r.built.Bytes())
		if r.data != nil {
			if _, err := stdout.Write(r.data); err != nil {
				b.writeErr(err)
			}
		}
	})
	return b.end(read)
}

// Maps written to a directory go in batches that share their syncs
// (durable.WriteFiles), at most this many maps or bytes at a time.
const (
	writeBatch      = 64
	writeBatchBytes = 8 << 20
)

// intoDir writes one <native id>.json.gz a session into the directory out
// (checked before any log is parsed) and returns how many sessions were
// read.
func (b *streamBuild) intoDir(sessions []int32, out string) int {
	var batch []*builtSession
	size := 0
	read := b.each(sessions, gzipMap, func(r *builtSession) {
		batch = append(batch, r)
		size += len(r.data)
		if len(batch) >= writeBatch || size >= writeBatchBytes {
			b.writeBatch(batch, out)
			batch, size = batch[:0], 0
		}
	})
	b.writeBatch(batch, out)
	return read
}

// writeBatch writes the maps of a batch of sessions, later ones over
// earlier ones of the same name, then says what each session reported
// and where its map went, in order.
func (b *streamBuild) writeBatch(batch []*builtSession, out string) {
	var files []durable.Pending
	for _, r := range batch {
		if r.data != nil {
			files = append(files, durable.Pending{Target: filepath.Join(out, mapstore.FileName(r.native)), Data: r.data})
		}
	}
	errs := durable.WriteFiles(files, 0o600)
	i := 0
	for _, r := range batch {
		b.stderr.Write(r.said.Bytes())
		b.stderr.Write(r.built.Bytes())
		if r.data == nil {
			continue
		}
		if errs[i] != nil {
			b.writeErr(errs[i])
		} else {
			fmt.Fprintln(b.stderr, files[i].Target)
		}
		i++
	}
}

// toFile writes the one session of the inputs to the map file out. More
// sessions are a usage error, said once every input was read (a session
// counts when any of its inputs could be read).
func (b *streamBuild) toFile(sessions []int32, out string) int {
	var one *builtSession
	read := b.each(sessions, gzipMap, func(r *builtSession) {
		b.stderr.Write(r.said.Bytes())
		if one == nil && r.read {
			one = r
		}
	})
	if read == 0 {
		return b.end(read)
	}
	if read != 1 {
		fmt.Fprintf(b.stderr, "agentmap build: %d sessions in the inputs; give a directory to -o, or pick one with --session\n", read)
		return exitUsage
	}
	if code := checkBuildOutput(out, true, b.stderr); code != exitOK {
		return code
	}
	b.stderr.Write(one.built.Bytes())
	if one.data != nil {
		if err := durable.WriteOutput(out, one.data, 0o600); err != nil {
			b.writeErr(err)
		} else {
			fmt.Fprintln(b.stderr, out)
		}
	}
	return b.end(read)
}

// checkBuildOutput refuses an -o that would be guessed at: a name that is
// neither a map file (.json.gz) nor an existing directory is not made into
// a directory silently; a trailing slash (maps/) asks for one.
func checkBuildOutput(out string, single bool, stderr io.Writer) int {
	if single {
		if !outputDirExists("build", "-o", out, stderr) {
			return exitFailure
		}
		return exitOK
	}
	fi, err := os.Stat(out)
	switch {
	case err == nil && fi.IsDir():
		return exitOK
	case err == nil:
		// A regular file: devices and FIFOs went to toFile.
		fmt.Fprintf(stderr, "agentmap build: -o %s is a regular file, and a map file ends in .json.gz: name a FILE.json.gz, a directory, or - for JSON on stdout\n", out)
		return exitUsage
	case strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)):
		if err := durable.MkdirAll(out); err != nil {
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			return exitFailure
		}
		return exitOK
	case filepath.Ext(out) != "":
		fmt.Fprintf(stderr, "agentmap build: -o %s: a map file must end in .json.gz (- prints JSON; a directory ends in /)\n", out)
		return exitUsage
	}
	fmt.Fprintf(stderr, "agentmap build: -o %s: no such directory (create it, end the name with / to have it created, or name a FILE.json.gz)\n", out)
	return exitFailure
}
