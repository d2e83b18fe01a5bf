package builder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// DefaultEventCap is the format page's event cap.
const DefaultEventCap = 20000

// gzipLevel is fixed so that the same map always gzips to the same bytes;
// the default level costs a third of the best one for a few percent.
const gzipLevel = 6

// Schema is the format identifier written into every map.
const Schema = "agentplay/v1"

// Options tune one build.
type Options struct {
	PathMode redact.Mode
	HashKey  []byte // for hashed mode; nil falls back to dirs_only
	EventCap int    // 0 means DefaultEventCap
	// Producer is session.cliVersion, e.g. "agentmap 0.1.0"; excluded from
	// the content hash.
	Producer string
	// Prices overrides the embedded price table: keys are model-name
	// prefixes (lower case), the longest matching prefix wins.
	Prices map[string]Price
}

// Map is an agentplay/v1 session map. Its fields mirror the format page;
// Canonical decides which optional fields are written.
type Map struct {
	Schema      string
	ContentHash string
	Session     Session
	Totals      Totals
	Repos       []Repo
	Files       []File
	Agents      []Agent
	Tasks       []Task // nil when the session has no user turn
	PRs         []PR
	Events      []Event

	// Unpriced lists the models that served tokens but have no price in
	// the table in effect: their cost is 0 in the map (the format wants a
	// number), and a reader must say "unpriced" rather than show $0. Not
	// part of the map document.
	Unpriced []string

	nativeID string
	// canon is the canonical JSON Canonical last returned, for Gzip.
	canon []byte
}

// Session is the map's session block.
type Session struct {
	ID         string
	AgentTool  string
	CLIVersion string
	StartedAt  string // "" when the session has no time at all
	DurationMs int64
	Models     []string
	PathMode   string
	Truncated  bool
	Outcome    string
	Role       string
	// ParentSessionID is "" for null.
	ParentSessionID string
}

// Totals are the session-wide counters of the format page.
type Totals struct {
	Calls, Requests, UserTurns, Subagents, Errors int
	Tokens                                        int64
	CostUSD                                       float64
	FilesTouched, FilesCreated, FilesDeleted      int
	ErrorsBySource                                ErrorsBySource
	ErrorsByClass                                 map[string]int
	Retries, Delays                               int
	DelayMs, MaxContext                           int64
	Compactions                                   int
	LLMLatencyP50, LLMLatencyP95                  int64
	OutputTokens                                  int64
	Tasks                                         int
	PRsCreated, PRsMerged, PRsClosed, PRComments  int
	Commits, TicketsCreated, TicketsUpdated       int
	Artifacts, SkillsCreated, SkillsUpdated       int
	ModelSwitches                                 int
	PromptChars, PromptImages, PromptURLs         int
}

// ErrorsBySource always carries all five sources so the shape is stable.
type ErrorsBySource struct {
	Tool, MCP, LLM, Hook, Orchestration int
}

// Repo is one repos[] entry.
type Repo struct {
	ID, Name, Remote string
}

// File is one files[] entry.
type File struct {
	ID                 int
	Repo               string
	Path               string
	Reads, Edits, Hits int
	First              int
	Op                 string
}

// Agent is one agents[] entry: the main agent or a subagent lane.
type Agent struct {
	ID           string
	Parent       string // "" for null (main)
	Kind         string // main, subagent
	SubagentType string
	Model        string
	LaunchSeq    *int
	Start, End   int64
	Calls        int
	Requests     int
	Tokens       int64
	Cost         float64
	Outcome      string
}

// RequestsWithoutUsage counts the model requests that recorded no token
// usage, as mapfile.Event.NoUsage judges one in a map read back: the
// token totals and the cost leave them out.
func (m *Map) RequestsWithoutUsage() int {
	n := 0
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind == "llm" && e.In == 0 && e.CW == 0 && e.CR == 0 && e.Out == 0 && e.Cost == 0 {
			n++
		}
	}
	return n
}

// Task is one tasks[] entry.
type Task struct {
	N                   int
	ID, Name, Source    string
	StartSeq, EndSeq    int
	StartT, EndT        int64
	FirstTurn, LastTurn int
}

// PR is one prs[] entry.
type PR struct {
	Provider, Repo string
	Number         int
	URL            string
	Seq            int
	State          string
}

// Target is one targets[] entry: a file (File >= 0) or an outside bucket.
type Target struct {
	File  int // -1 for an outside target
	Label string
	Touch string
	Op    string
}

// VCS is the vcs facet of an event.
type VCS struct {
	Provider, Action, Repo string
	Number                 int
}

// Event is one events[] entry. Only the fields of its kind are written.
type Event struct {
	Seq   int
	T     int64
	Kind  string
	Agent string
	Err   bool
	Task  int
	Model string
	Cat   string

	// tool calls (read, search, edit, exec, verify, mcp, skill, subagent, web, tool)
	Tool         string
	Verb         string
	Targets      []Target
	OutBytes     *int64
	Dur          *int64
	VCS          *VCS
	Server       string
	Skill        string
	SubagentType string
	Child        string
	Host         string
	ErrClass     string
	ExitCode     *int
	RetryOf      *int
	Attempt      int

	// llm
	In, CW, CR, Out int64
	Cost            float64
	Latency         *int64
	Stop            string
	Thinking        bool
	ToolCalls       int
	TextChars       int

	// user
	Chars, Images, URLs int

	// error
	Source    string
	Hook      string
	HookEvent string
	SrcUUID   string
	Ref       *int // error and delay
	Retry     int

	// delay and compaction
	Cause      string
	Ms         int64
	Trigger    string
	PreTokens  int64
	PostTokens int64

	// outputs: commit, pr_*, ticket, artifact, skill_write, model_switch
	Repo    string
	SHA     string
	Files   int
	Ins     int
	Del     int
	Number  int
	URL     string
	Tracker string
	Action  string
	ID      string
	Version string
	Name    string
	From    string
	To      string
}

// NativeID is the session's native id (the map file's base name).
func (m *Map) NativeID() string { return m.nativeID }

// Canonical returns the canonical JSON of the map (map-decisions.md), the
// bytes that are gzipped into the store. It (re)computes ContentHash, and
// keeps the bytes for Gzip; they must not be modified.
func (m *Map) Canonical() ([]byte, error) {
	canon, err := m.encode()
	m.canon = canon // nil on error: Gzip encodes again and fails too
	if err != nil {
		return nil, err
	}
	return canon, nil
}

// encode writes the hashed document (no contentHash, no
// session.cliVersion) into a pooled buffer, hashes it, then appends the
// full session there and assembles the written document from the pieces
// into one allocation of its exact size: each part is encoded once, and
// the events dominate the cost.
func (m *Map) encode() ([]byte, error) {
	sp := scratchBufs.Get().(*[]byte)
	w := jsonAppender{b: (*sp)[:0]}
	defer func() {
		if cap(w.b) <= maxPooledScratch {
			*sp = w.b
			scratchBufs.Put(sp)
		}
	}()
	w.raw(`{"agents":`)
	appendAgents(&w, m.Agents)
	contentHashAt := len(w.b)
	w.raw(`,"events":`)
	appendEvents(&w, m.Events)
	w.raw(`,"files":`)
	appendFiles(&w, m.Files)
	w.raw(`,"prs":`)
	appendPRs(&w, m.PRs)
	w.raw(`,"repos":`)
	appendRepos(&w, m.Repos)
	w.str(`,"schema":`, m.Schema)
	w.raw(`,"session":`)
	sessionAt := len(w.b)
	appendSession(&w, &m.Session, false)
	sessionEnd := len(w.b)
	if m.Tasks != nil {
		w.raw(`,"tasks":`)
		appendTasks(&w, m.Tasks)
	}
	w.raw(`,"totals":`)
	appendTotals(&w, &m.Totals)
	w.raw(`}`)
	if w.err != nil {
		return nil, w.err
	}
	hashed := len(w.b)
	sum := sha256.Sum256(w.b)
	m.ContentHash = hex.EncodeToString(sum[:])
	appendSession(&w, &m.Session, true)
	full := w.b[hashed:]
	const hashKey = `,"contentHash":`
	out := makeCanon(hashed - (sessionEnd - sessionAt) + len(full) + len(hashKey) + len(m.ContentHash) + 2)
	out = append(out, w.b[:contentHashAt]...)
	out = append(out, hashKey...)
	out = appendString(out, m.ContentHash)
	out = append(out, w.b[contentHashAt:sessionAt]...)
	out = append(out, full...)
	out = append(out, w.b[sessionEnd:hashed]...)
	return out, nil
}

// scratchBufs holds the buffers maps are encoded in; one larger than
// maxPooledScratch (a huge map) is left to the collector.
var scratchBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledScratch = 64 << 20

// Release hands the map's events and canonical bytes to the next Build,
// for a caller that is done with the map once it has its gzip (a flush:
// a catch-up builds thousands of maps, and those two were most of the
// bytes left after the nodes). m, its Events and any bytes Canonical
// returned must not be used after; the gzip stays valid.
func (m *Map) Release() {
	if ev := m.Events; cap(ev) > 0 && cap(ev) <= maxPooledEvents {
		clear(ev)
		ev = ev[:0]
		pooledEvents.Put(&ev)
	}
	if c := m.canon; cap(c) > 0 && cap(c) <= maxPooledCanon {
		c = c[:0]
		pooledCanon.Put(&c)
	}
	*m = Map{}
}

// pooledEvents and pooledCanon hold what Release gave back, up to 4,096
// events (3 MiB) and 4 MiB of JSON; larger ones are left to the collector.
var pooledEvents, pooledCanon sync.Pool

const (
	maxPooledEvents = 4096
	maxPooledCanon  = 4 << 20
)

// makeEvents returns n zero events, in a released slice when one is
// large enough.
func makeEvents(n int) []Event {
	if p, ok := pooledEvents.Get().(*[]Event); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]Event, n)
}

// makeCanon returns an empty buffer of capacity n at least, released
// when one is large enough.
func makeCanon(n int) []byte {
	if p, ok := pooledCanon.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// MarshalJSON writes the canonical form, so encoding/json users get the
// same bytes as the store.
func (m *Map) MarshalJSON() ([]byte, error) { return m.Canonical() }

// Gzip returns the deterministic gzip of the canonical JSON: no name, no
// modification time, a fixed level. The compressor is klauspost/compress's
// (several times faster than compress/flate at this level), its writers
// pooled: a catch-up gzips thousands of maps.
//
// The bytes are those Canonical last returned (Build computes them), so a
// map is encoded once: a caller that changes a built map calls Canonical
// again before Gzip.
func (m *Map) Gzip() ([]byte, error) {
	canon := m.canon
	if canon == nil {
		var err error
		if canon, err = m.Canonical(); err != nil {
			return nil, err
		}
	}
	g, _ := gzippers.Get().(*gzipper)
	if g == nil {
		g = new(gzipper)
		var err error
		if g.zw, err = gzip.NewWriterLevel(&g.out, gzipLevel); err != nil {
			return nil, fmt.Errorf("gzip map: %w", err)
		}
	}
	defer g.release()
	g.out.Reset()
	g.zw.Reset(&g.out)
	if _, err := g.zw.Write(canon); err != nil {
		return nil, fmt.Errorf("gzip map: %w", err)
	}
	if err := g.zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip map: %w", err)
	}
	// The gzip is kept until the map is written: a copy of its size, not
	// the buffer it grew in.
	return bytes.Clone(g.out.Bytes()), nil
}

// gzipper is a pooled gzip writer and the buffer it writes into.
type gzipper struct {
	zw  *gzip.Writer
	out bytes.Buffer
}

var gzippers sync.Pool

// maxPooledGzip bounds the buffer an idle gzipper keeps: a huge map's is
// left to the collector.
const maxPooledGzip = 4 << 20

func (g *gzipper) release() {
	if g.out.Cap() > maxPooledGzip {
		g.out = bytes.Buffer{} // the writer writes to &g.out still
	}
	gzippers.Put(g)
}

// AsLane relabels the events of a child session (a Codex child rollout) as
// lane laneID of its parent: session records are dropped, every other event
// gets Agent = laneID. The input is not modified.
func AsLane(events []event.Event, laneID string) []event.Event {
	out := make([]event.Event, 0, len(events))
	for _, e := range events {
		if e.Kind == event.KindSession {
			continue
		}
		e.Agent = laneID
		out = append(out, e)
	}
	return out
}

func laneName(agent string) string {
	if agent == "" {
		return "main"
	}
	return agent
}

// isCallKind reports whether a map kind is a tool call.
func isCallKind(kind string) bool {
	switch kind {
	case "read", "search", "edit", "exec", "verify", "mcp", "skill", "subagent", "web", "tool":
		return true
	}
	return false
}

func hasTargets(kind string) bool {
	switch kind {
	case "read", "search", "edit", "exec", "verify":
		return true
	}
	return false
}

func isPRKind(kind string) bool { return strings.HasPrefix(kind, "pr_") }
