package agents

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/cursor"
	"github.com/agentmap/agentmap/watchers/gemini"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// FileStats counts what reading one file produced.
type FileStats struct {
	Lines     int // complete lines read
	Skipped   int // lines the parser rejected (invalid JSON, wrong shape)
	Oversized int // lines beyond the cap, skipped unread
	Bytes     int64
}

// ErrEmpty means a file has no content at all.
var ErrEmpty = errors.New("file is empty")

// Open opens a log file for reading, decompressing Codex .zst rollouts.
func Open(path string) (io.ReadCloser, error) {
	if strings.HasSuffix(path, ".zst") {
		return codex.OpenMaybeZstd(path)
	}
	return watchers.OpenLog(path)
}

// FirstLineCap bounds what is read of a log's first line to recognise its
// agent and route it: a first prompt with a pasted image makes a line of
// megabytes, whose leading keys name all that routing needs.
const FirstLineCap = 4 << 20

// FirstLine returns the first line of a log without its newline, or its
// head when the line is longer than FirstLineCap (see ReadFirstLine).
func FirstLine(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, _, err := ReadFirstLine(f)
	return line, err
}

// ReadFirstLine is FirstLine over an open log, and also says whether the
// line is final: it ended (its newline came within the cap), or it is as
// long as the cap or longer. A log still being written may not have a whole
// first line yet, and waits for one; a line past the cap is final as far
// as it is read, as bytes written stay as they are, so the routing it
// gives cannot change as it goes on (nor between `agentmap build`, `scan`
// and a daemon that met it at another length). Its head is returned in
// its place: the object of the members whole within the cap
// (jsonscan.Leading), which every agent's recogniser and router read as
// they read a whole line; or the bytes within the cap, when they open no
// object. A read error is returned with ended false.
func ReadFirstLine(r io.Reader) (line []byte, ended bool, err error) {
	br := firstLineReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		firstLineReaders.Put(br)
	}()
	for len(line) < FirstLineCap {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			ended = true
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, err
		}
	}
	if len(line) >= FirstLineCap {
		// The length read alone decides, ended or not, so that it routes
		// the same half written and whole: the bytes as read, before a
		// \r ending them is taken off (the read may stop on it, and the
		// line then never grows to the cap).
		return lineHead(bytes.TrimRight(line[:FirstLineCap], "\r\n")), true, nil
	}
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, ended, ErrEmpty
	}
	return line, ended, nil
}

// lineHead is the head of a first line cut at the cap: its leading
// members when it opens an object, else the bytes read (which no agent
// recognises; the daemon routes them by the log's path, as any garbage
// first line).
func lineHead(cut []byte) []byte {
	if head, ok := jsonscan.Leading(cut); ok {
		return head
	}
	return cut
}

// firstLineReaders are ReadFirstLine's buffers (a longer line is read in
// pieces): a catch-up reads the first line of every log, some twice, and
// a fresh buffer each time was a good part of its allocation.
var firstLineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}

// detectLines and detectBytes bound how far DetectFile looks for a
// recognisable line: past a first line as long as the tailer reads
// (watchers.DefaultMaxLine), and 4 MiB more.
const (
	detectLines = 64
	detectBytes = watchers.DefaultMaxLine + FirstLineCap
)

// DetectFile returns the agent of a log whose first line is not
// recognised (a torn or garbage line at the top): the first agent that
// recognises one of its next lines (a line too long for its head to
// tell, too: see ReadFirstLine). The daemon knows a file's agent from
// the directory it sits in, routes it with its literal first line and
// counts the bad line as skipped; `agentmap build` finds the agent here
// and then does the same, so both map the valid lines.
func DetectFile(path string) (Agent, bool) {
	f, err := Open(path)
	if err != nil {
		return Agent{}, false
	}
	defer f.Close()
	var found Agent
	var ok bool
	n := 0
	stop := errors.New("stop")
	// Lines past FirstLineCap are stepped over unread: a first line
	// whose head says too little is no reason to refuse a log whose
	// next lines are its agent's.
	watchers.ReadLines(io.LimitReader(f, detectBytes), FirstLineCap, true, func(line []byte) error {
		if n++; n > detectLines {
			return stop
		}
		if found, ok = Detect(line); ok {
			return stop
		}
		return nil
	})
	return found, ok
}

// ParseFile runs a fresh parser for src over a whole file, the way the
// daemon would over the same bytes: complete lines in order, plus a final
// line without newline if the parser accepts it.
func ParseFile(path string, a Agent, src watchers.Source, maxLine int) ([]event.Event, FileStats, error) {
	f, err := Open(path)
	if err != nil {
		return nil, FileStats{}, err
	}
	defer f.Close()
	p := a.New(src)
	AttachFile(p, path)
	var events []event.Event
	var st FileStats
	ls, err := watchers.ReadLines(f, maxLine, true, func(line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var perr error
		events, perr = p.Line(line, events)
		if perr != nil {
			st.Skipped++
		}
		return nil
	})
	st.Lines, st.Oversized, st.Bytes = ls.Lines, ls.Oversized, ls.Bytes+int64(ls.Partial)
	if err != nil {
		return events, st, fmt.Errorf("read %s: %w", path, err)
	}
	return events, st, nil
}

// fileAware is implemented by parsers whose records carry no times of their
// own (Cursor transcripts): they take the file's path and times instead.
type fileAware interface {
	SetFile(path string, startMs, endMs int64)
}

// pathAware is implemented by parsers that find facts beside the file they
// read (Gemini CLI: the project root of its temp directory).
type pathAware interface {
	SetPath(path string)
}

// AttachFile hands a parser the file it reads, when the parser wants it.
// Call it before each batch of lines, so the file times are current; the
// daemon and ParseFile both do, which keeps their maps identical.
func AttachFile(p watchers.Parser, path string) {
	switch fp := p.(type) {
	case pathAware:
		fp.SetPath(path)
	case fileAware:
		if st, et, err := cursor.FileTimes(path); err == nil {
			fp.SetFile(path, st, et)
		}
	case *claude.Parser:
		// A subagent log's sidecar names its type and launching call. Main
		// transcripts have none: no file system look-up on every batch.
		if !fp.NeedsLaneMeta() {
			return
		}
		if m, ok := claude.ReadLaneMeta(path); ok {
			fp.SetLaneMeta(m)
		}
	}
}

// LooksLikeWholeJSON spots the oldest Codex form: one JSON document
// {session, items}, possibly pretty-printed over many lines, which is read
// whole rather than line by line.
func LooksLikeWholeJSON(firstLine []byte) bool {
	t := strings.TrimSpace(string(firstLine))
	return t == "{" || strings.HasPrefix(t, `{"session"`) || strings.HasPrefix(t, `{ "session"`)
}

// ParseWhole reads a whole-document log: a Codex rollout, or a Gemini CLI
// conversation of the form older clients wrote (chats/session-*.json).
// The Source names the agent.
func ParseWhole(path string) ([]event.Event, watchers.Source, error) {
	if gemini.IsWholeChat(path) {
		src, err := gemini.Identify(path, nil)
		if err != nil {
			return nil, src, err
		}
		events, err := gemini.ParseWhole(path, src)
		return events, src, err
	}
	f, err := Open(path)
	if err != nil {
		return nil, watchers.Source{}, err
	}
	defer f.Close()
	events, src, err := codex.ParseWhole(f)
	if err != nil {
		return nil, src, err
	}
	if src.Session == "" {
		return nil, src, errors.New("no session id found")
	}
	return events, src, nil
}
