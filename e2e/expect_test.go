package e2e

import (
	"path/filepath"
	"sort"
)

// expect is what a script makes happen in one session, accumulated while
// the script is written so that the comparison never repeats it by hand.
type expect struct {
	calls  map[string]int // by map event kind (read, edit, exec, verify, subagent, tool…)
	tools  map[string]int // by the client's tool name
	exits  []int          // exit codes of the failing shell commands, in order
	skills []string       // skills used, in order
	files  map[string]bool
	// reads counts, by path, the reads of files by shell commands (Codex:
	// what its parsed_cmd names); nil where the session is not checked
	// for them.
	reads       map[string]int
	userTurns   int
	compactions int
	mcpErrors   int            // failed MCP calls
	hookErrors  int            // failed hooks
	servers     map[string]int // MCP calls by server
	retries     int            // failed commands repeated with success
	// outBytes are the output sizes of the shell calls with these verbs.
	outBytes map[string]int64
}

func newExpect() *expect {
	return &expect{calls: map[string]int{}, tools: map[string]int{}, files: map[string]bool{}, servers: map[string]int{}}
}

func (e *expect) call(tool, kind string, files ...string) {
	e.tools[tool]++
	e.calls[kind]++
	for _, f := range files {
		e.files[filepath.ToSlash(f)] = true
	}
}

// shellTouch records a file a shell command read (reads 1) or a
// directory it listed or searched (reads 0); the session's reads are then
// checked.
func (e *expect) shellTouch(path string, reads int) {
	if e.reads == nil {
		e.reads = map[string]int{}
	}
	e.files[path] = true
	if reads > 0 {
		e.reads[path] += reads
	}
}

func (e *expect) fileList() []string {
	var out []string
	for f := range e.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// merge adds a subagent's calls to its parent session's expectations.
func (e *expect) merge(o *expect) {
	for k, v := range o.calls {
		e.calls[k] += v
	}
	for k, v := range o.tools {
		e.tools[k] += v
	}
	e.exits = append(e.exits, o.exits...)
	for k, v := range o.servers {
		e.servers[k] += v
	}
	e.mcpErrors += o.mcpErrors
	for f := range o.files {
		e.files[f] = true
	}
	if o.reads != nil && e.reads == nil {
		e.reads = map[string]int{}
	}
	for f, n := range o.reads {
		e.reads[f] += n
	}
}
