package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/state/durable"
	"github.com/agentmap/agentmap/state/mapstore"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/cursor"
)

func cmdBuild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("build", flag.ContinueOnError)
	fl.SetOutput(stderr)
	agentFlag := fl.String("agent", "auto", "agent of the inputs: auto, claude, codex, cursor, opencode, copilot or gemini")
	mode := fl.String("path-mode", "relative", "path mode: relative, dirs_only or hashed")
	keyFile := fl.String("hash-key-file", "", "key for hashed mode (created with 32 random bytes, 0600, if missing)")
	out := fl.String("o", ".", "output: a directory (one <native id>.json.gz per session), a .json.gz file (one session), or - for pretty JSON on stdout")
	session := fl.String("session", "", "build only the session with this native id")
	eventCap := fl.Int("event-cap", builder.DefaultEventCap, "most events kept in a map")
	configFile := fl.String("config", "", "take the map options (path mode, hash key, event cap, prices) from this config file, as the daemon does; flags override it")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentmap build [flags] FILE...")
		fmt.Fprintln(stderr, "Builds agentplay/v1 session maps from Claude Code, Codex, Cursor, OpenCode, Copilot CLI or Gemini CLI logs.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return exitUsage
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts, code := buildOptions(set, *configFile, *mode, *keyFile, *eventCap, stderr)
	if code != exitOK {
		return code
	}
	if *agentFlag != "auto" {
		if _, ok := agents.ByName(*agentFlag); !ok {
			fmt.Fprintf(stderr, "agentmap build: unknown agent %q (auto, claude, codex, cursor, opencode, copilot or gemini)\n", *agentFlag)
			return exitUsage
		}
	}

	sessions, failed := collect(ctx, fl.Args(), *agentFlag, stderr)
	if *session != "" {
		var kept []*inputSession
		for _, s := range sessions {
			if s.native == *session {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			fmt.Fprintf(stderr, "agentmap build: no session %q in the inputs\n", *session)
			return exitFailure
		}
		sessions = kept
	}
	if len(sessions) == 0 {
		if !failed {
			fmt.Fprintln(stderr, "agentmap build: the inputs hold no session")
		}
		return exitFailure
	}
	if *out == "-" {
		return writeStdout(sessions, opts, stdout, stderr, failed)
	}
	return writeFiles(sessions, opts, *out, stderr, failed)
}

// buildOptions are the map options of a build: the flags, over the map
// options of a config file when one is given, so that `build --config F`
// writes the same bytes as a daemon running with F.
func buildOptions(set map[string]bool, configFile, mode, keyFile string, eventCap int, stderr io.Writer) (builder.Options, int) {
	opts := builder.Options{PathMode: redact.Mode(mode), EventCap: eventCap, Producer: producer()}
	var c *config.Config
	if configFile != "" {
		var code int
		if c, code = loadConfig(configFile, "build", stderr); code != exitOK {
			return opts, code
		}
		if !set["path-mode"] {
			mode = c.Maps.PathMode
		}
	}
	switch redact.Mode(mode) {
	case redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed:
	default:
		fmt.Fprintf(stderr, "agentmap build: unknown path mode %q (relative, dirs_only or hashed)\n", mode)
		return opts, exitUsage
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
			return opts, exitFailure
		}
		return o, exitOK
	}
	opts.PathMode = redact.Mode(mode)
	if opts.PathMode == redact.ModeHashed && keyFile != "" {
		key, err := config.LoadOrCreateHashKey(keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			return opts, exitFailure
		}
		opts.HashKey = key
	}
	return opts, exitOK
}

// inputSession is one session assembled from the inputs: its own files and
// the lanes that belong to it.
type inputSession struct {
	agent  string
	native string
	events []event.Event
	// children are Codex child sessions whose records also form lanes here.
	children []*inputSession
	lane     string // this session's lane id in its parent, if it is a child
	parent   string
}

func (s *inputSession) all() []event.Event {
	own := agents.EnsureSession(s.agent, s.native, s.events)
	if len(s.children) == 0 {
		return own
	}
	all := append([]event.Event(nil), own...)
	for _, c := range s.children {
		all = append(all, builder.AsLane(c.events, c.lane)...)
	}
	return all
}

// collect reads every input (and the subagent files that belong to a main
// Claude file) and groups the records by session. It reports each problem
// on stderr and carries on with the other inputs.
func collect(ctx context.Context, paths []string, agentName string, stderr io.Writer) ([]*inputSession, bool) {
	failed := false
	bySession := map[string]*inputSession{}
	var order []string
	get := func(agent, native string) *inputSession {
		k := agent + "\x00" + native
		s, ok := bySession[k]
		if !ok {
			s = &inputSession{agent: agent, native: native}
			bySession[k] = s
			order = append(order, k)
		}
		return s
	}
	seen := map[string]bool{}
	queue := rotationsFirst(paths)
	explicit := map[string]bool{}
	for _, p := range paths {
		explicit[p] = true
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		abs, _ := filepath.Abs(path)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		report := func(err error) {
			if explicit[path] {
				fmt.Fprintf(stderr, "agentmap build: %s: %v\n", path, err)
				failed = true
			}
		}
		info, err := os.Stat(path)
		switch {
		case err != nil:
			report(describeOpenError(err))
			continue
		case info.IsDir():
			report(errors.New("is a directory; give the log files"))
			continue
		case info.Size() == 0:
			report(agents.ErrEmpty)
			continue
		}
		if (agentName == "auto" || agentName == "cursor") && (cursor.IsVSCDB(path) || cursor.IsStoreDB(path)) {
			read := cursor.ReadVSCDB
			if cursor.IsStoreDB(path) {
				read = cursor.ReadStoreDB
			}
			convs, err := read(ctx, path)
			if err != nil {
				report(err)
				continue
			}
			for _, c := range convs {
				s := get("cursor", c.NativeID)
				s.events = append(s.events, c.Events...)
			}
			continue
		}
		if a, ok := agents.DBReader(agentName, path); ok {
			convs, err := a.ReadDB(ctx, path)
			if err != nil {
				report(err)
				continue
			}
			for _, c := range convs {
				s := get(a.Name, c.NativeID)
				s.events = append(s.events, c.Events...)
			}
			continue
		}
		first, err := agents.FirstLine(path)
		if err != nil {
			report(describeOpenError(err))
			continue
		}
		a, ok := pickAgent(agentName, first)
		if !ok && agentName == "auto" && !agents.LooksLikeWholeJSON(first) {
			// A garbage first line: the agent is the one the next lines
			// name; the line is counted as skipped, as the daemon does.
			a, ok = agents.DetectFile(path)
		}
		if !ok && (agentName == "auto" || a.Whole) && agents.LooksLikeWholeJSON(first) {
			events, src, err := agents.ParseWhole(path)
			if errors.Is(err, codex.ErrNoSession) && agentName == "auto" {
				// Any pretty-printed JSON starts with "{": without a
				// session object it is no rollout, and no Codex file.
				err = errors.New(notALog + " (a JSON document without a Codex session)")
			}
			if err != nil {
				report(err)
				continue
			}
			s := get(src.Agent, src.Session)
			s.events = append(s.events, events...)
			continue
		}
		if !ok {
			report(errors.New(notALog + " (first line not recognised)"))
			continue
		}
		src, err := a.Identify(path, first)
		if err != nil {
			report(err)
			continue
		}
		if src.Session == "" {
			report(errors.New("no session id found"))
			continue
		}
		events, st, err := agents.ParseFile(path, a, src, watchers.DefaultMaxLine)
		if err != nil {
			report(err)
			continue
		}
		if st.Skipped+st.Oversized > 0 {
			fmt.Fprintf(stderr, "agentmap build: %s: %d of %d lines skipped (unreadable or over the size cap)\n",
				path, st.Skipped+st.Oversized, st.Lines+st.Oversized)
		}
		s := get(a.Name, src.Session)
		s.events = append(s.events, events...)
		if src.ParentSession != "" {
			s.parent, s.lane = src.ParentSession, src.ChildLane
		}
		if a.Companions != nil && src.Lane == "" {
			queue = append(queue, a.Companions(path, src)...)
		}
	}
	var out []*inputSession
	for _, k := range order {
		s := bySession[k]
		if s.parent != "" {
			if p, ok := bySession[s.agent+"\x00"+s.parent]; ok {
				p.children = append(p.children, s)
			}
		}
		out = append(out, s)
	}
	return out, failed
}

// rotationsFirst orders the inputs so that the rotated copies of a log
// (log.2, log.1) come just before it, oldest first, wherever they were
// given: the halves of a copy-truncate rotation then read as one session
// in the order the daemon reads them.
func rotationsFirst(paths []string) []string {
	groups := map[string][]string{}
	var order []string
	for _, p := range paths {
		base, _ := watchers.Rotation(p)
		if _, ok := groups[base]; !ok {
			order = append(order, base)
		}
		groups[base] = append(groups[base], p)
	}
	out := make([]string, 0, len(paths))
	for _, base := range order {
		g := groups[base]
		sort.SliceStable(g, func(i, j int) bool { return watchers.RotationOrder(g[i], g[j]) < 0 })
		out = append(out, g...)
	}
	return out
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

// eachMap builds the map of every session and hands it to write, reporting
// each failure on stderr and carrying on with the other sessions.
func eachMap(sessions []*inputSession, opts builder.Options, stderr io.Writer, write func(*builder.Map) error) bool {
	failed := false
	for _, s := range sessions {
		m, err := buildMap(s, opts)
		if errors.Is(err, builder.ErrEmptySession) {
			// Nothing happened in it: no map, and no failure.
			fmt.Fprintf(stderr, "agentmap build: session %s has no events: no map\n", s.native)
			continue
		}
		if err == nil {
			err = write(m)
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentmap build: %v\n", err)
			failed = true
		}
	}
	return failed
}

func writeStdout(sessions []*inputSession, opts builder.Options, stdout, stderr io.Writer, failed bool) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	failed = eachMap(sessions, opts, stderr, func(m *builder.Map) error {
		canon, err := m.Canonical()
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(canon, &v); err != nil {
			return err
		}
		return enc.Encode(v)
	}) || failed
	if failed {
		return exitFailure
	}
	return exitOK
}

func writeFiles(sessions []*inputSession, opts builder.Options, out string, stderr io.Writer, failed bool) int {
	single := strings.HasSuffix(out, ".json.gz")
	if single && len(sessions) != 1 {
		fmt.Fprintf(stderr, "agentmap build: %d sessions in the inputs; give a directory to -o, or pick one with --session\n", len(sessions))
		return exitUsage
	}
	if code := checkBuildOutput(out, single, stderr); code != exitOK {
		return code
	}
	failed = eachMap(sessions, opts, stderr, func(m *builder.Map) error {
		gz, err := m.Gzip()
		if err != nil {
			return err
		}
		target := out
		if !single {
			target = filepath.Join(out, mapstore.FileName(m.NativeID()))
		}
		if err := durable.WriteFile(target, gz, 0o600); err != nil {
			return err
		}
		fmt.Fprintln(stderr, target)
		return nil
	}) || failed
	if failed {
		return exitFailure
	}
	return exitOK
}

// checkBuildOutput refuses an -o that would be guessed at: a name that is
// neither a map file (.json.gz) nor an existing directory is not made into
// a directory silently; a trailing slash (maps/) asks for one.
func checkBuildOutput(out string, single bool, stderr io.Writer) int {
	if single {
		if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "agentmap build: -o %s: the directory %s does not exist (create it first)\n", out, filepath.Dir(out))
			return exitFailure
		}
		return exitOK
	}
	fi, err := os.Stat(out)
	switch {
	case err == nil && fi.IsDir():
		return exitOK
	case err == nil:
		fmt.Fprintf(stderr, "agentmap build: -o %s is a file; a map file must end in .json.gz, and a directory must be one\n", out)
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
