package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentmap/agentmap/export/mapfile"
)

// The page's data, kept compact so that ten thousand sessions stay a few
// megabytes: strings are interned in one table and rows are arrays whose
// positions the page's script names (report.js, const S and A).

// strtab interns strings; index 0 is "".
type strtab struct {
	idx  map[string]int
	list []string
}

func newStrtab() *strtab { return &strtab{idx: map[string]int{"": 0}, list: []string{""}} }

func (s *strtab) id(v string) int {
	if i, ok := s.idx[v]; ok {
		return i
	}
	s.idx[v] = len(s.list)
	s.list = append(s.list, v)
	return len(s.list) - 1
}

func (s *strtab) ids(vs []string) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = s.id(v)
	}
	return out
}

// overview is the data of the overview page.
type overview struct {
	Version   int      `json:"v"`
	Generated string   `json:"generated"`          // RFC 3339, in the generating machine's zone
	Zone      string   `json:"zone"`               // that zone, as zoneLabel names it
	Single    bool     `json:"single,omitempty"`   // a report of one session page
	Filtered  bool     `json:"filtered,omitempty"` // Options.Filtered
	Strings   []string `json:"str"`
	Sessions  [][]any  `json:"s"`      // sessionRow
	Aggs      []agg    `json:"a"`      // per session, same order
	Chunks    []int    `json:"chunks"` // the first session of each data element c0, c1, …
}

// agg is what one session adds to the overview's charts. Each list is
// flat, a run of [string id, counters...] after another (one array per
// list, not one per entry: ten thousand sessions' lists are then parsed
// and summed in a fraction of the time).
type agg struct {
	ErrSource []int64   `json:"es,omitempty"`  // source, n
	ErrClass  []int64   `json:"ec,omitempty"`  // class, n
	Verbs     []int64   `json:"v,omitempty"`   // verb, runs, failed, retried
	MCP       []int64   `json:"m,omitempty"`   // server, tool, calls, failed
	Files     []int64   `json:"f,omitempty"`   // "repo: path", reads, edits
	Subagents []int64   `json:"sa,omitempty"`  // subagent type, launches
	Delays    []int64   `json:"dc,omitempty"`  // cause, n, ms
	Cats      []int64   `json:"cat,omitempty"` // tool category, calls, ms
	Models    []int64   `json:"mt,omitempty"`  // model, in, cw, cr, out
	ModelCost []float64 `json:"mc,omitempty"`  // cost in USD of each model of Models, in its order
	// Usage by the time of its requests, for a session whose requests do
	// not all fall in the quarter hour it started in (usageSlots).
	Slots    []int64   `json:"ts,omitempty"` // quarter hour since the epoch, model, tokens
	SlotCost []float64 `json:"tc,omitempty"` // cost in USD of each run of Slots, in its order
}

// sessionRow lays out one session, in the order of report.js's S.
func sessionRow(st *strtab, m *Map, events int) []any {
	start, dated := m.Start()
	startMs := int64(0) // no start time: report.js shows "-" and charts no day
	if dated {
		startMs = start.UnixMilli()
	}
	var in, cw, cr, out int64
	for i := range m.Events {
		if e := &m.Events[i]; e.Kind == "llm" {
			in, cw, cr, out = in+e.In, cw+e.CW, cr+e.CR, out+e.Out
		}
	}
	repos := make([]string, 0, len(m.Repos))
	for _, r := range m.Repos {
		repos = append(repos, r.Name)
	}
	models := modelLabels(m)
	t := m.Totals
	trunc := 0
	if m.Session.Truncated {
		trunc = 1
	}
	unpriced := st.ids(unpricedModels(m))
	// the agent as every command names it (claude, not claude-code), so
	// that the page's filter and tables read as `list` and `--agent` do
	return []any{st.id(m.Session.NativeID()), st.id(AgentName(m.Session.AgentTool)), st.ids(repos), st.ids(models),
		startMs, m.Session.DurationMs, st.id(m.Session.Outcome),
		in, cw, cr, out, t.Tokens, t.CostUSD, t.Calls, t.Requests, t.Errors, t.Retries,
		t.Delays, t.DelayMs, t.MaxContext, t.Compactions, t.Subagents, events, trunc, t.UserTurns, t.OutputTokens, unpriced,
		// last, so that the columns before keep their places: the
		// requests that recorded no usage (S.nu), which a session some of
		// whose requests did marks in the list, as show and list mark it
		m.RequestsWithoutUsage()}
}

// rowUnpriced and rowNoUsage are the places in a session row of its
// unpriced models and of its requests without usage (report.js S.unpriced,
// S.nu).
const (
	rowUnpriced = 26
	rowNoUsage  = 27
)

// counter adds up [key, n...] rows in first-seen order.
type counter[T any] struct {
	order []string
	rows  map[string]*T
}

func (c *counter[T]) at(k string) *T {
	if c.rows == nil {
		c.rows = map[string]*T{}
	}
	r := c.rows[k]
	if r == nil {
		r = new(T)
		c.rows[k] = r
		c.order = append(c.order, k)
	}
	return r
}

func sessionAgg(st *strtab, m *Map) agg {
	var a agg
	for _, src := range sortedKeys(m.Totals.ErrorsBySource) {
		if n := m.Totals.ErrorsBySource[src]; n > 0 {
			a.ErrSource = append(a.ErrSource, int64(st.id(src)), int64(n))
		}
	}
	for _, c := range sortedKeys(m.Totals.ErrorsByClass) {
		if n := m.Totals.ErrorsByClass[c]; n > 0 {
			a.ErrClass = append(a.ErrClass, int64(st.id(c)), int64(n))
		}
	}
	var verbs, mcp, subs, delays, cats counter[[3]int64]
	var models counter[[5]float64]
	files := map[int][2]int64{}
	for i := range m.Events {
		e := &m.Events[i]
		failed := int64(0)
		if e.Err {
			failed = 1
		}
		retried := int64(0)
		if e.RetryOf != nil {
			retried = 1
		}
		if e.Verb != "" && (e.Kind == "exec" || e.Kind == "verify") {
			v := verbs.at(e.Verb)
			v[0], v[1], v[2] = v[0]+1, v[1]+failed, v[2]+retried
		}
		switch e.Kind {
		case "mcp":
			v := mcp.at(e.Server + "\x00" + e.Tool)
			v[0], v[1] = v[0]+1, v[1]+failed
		case "subagent":
			t := e.SubagentType
			if t == "" {
				t = "(untyped)"
			}
			subs.at(t)[0]++
		case "delay":
			v := delays.at(e.Cause)
			v[0], v[1] = v[0]+1, v[1]+e.Ms
		case "llm":
			v := models.at(modelLabel(e))
			v[0], v[1], v[2], v[3], v[4] = v[0]+float64(e.In), v[1]+float64(e.CW), v[2]+float64(e.CR), v[3]+float64(e.Out), v[4]+e.Cost
		}
		if e.IsCall() {
			cat := e.Cat
			if cat == "" {
				cat = e.Kind
			}
			v := cats.at(cat)
			v[0]++
			if e.Dur != nil {
				v[1] += *e.Dur
			}
		}
	}
	for _, f := range m.Files {
		if f.Reads == 0 && f.Edits == 0 {
			continue
		}
		files[st.id(fileLabel(m, f.Repo, f.Path))] = [2]int64{int64(f.Reads), int64(f.Edits)}
	}
	for _, k := range verbs.order {
		v := verbs.rows[k]
		a.Verbs = append(a.Verbs, int64(st.id(k)), v[0], v[1], v[2])
	}
	for _, k := range mcp.order {
		srv, tool, _ := strings.Cut(k, "\x00")
		v := mcp.rows[k]
		a.MCP = append(a.MCP, int64(st.id(srv)), int64(st.id(tool)), v[0], v[1])
	}
	for _, k := range subs.order {
		a.Subagents = append(a.Subagents, int64(st.id(k)), subs.rows[k][0])
	}
	for _, k := range delays.order {
		v := delays.rows[k]
		a.Delays = append(a.Delays, int64(st.id(k)), v[0], v[1])
	}
	for _, k := range cats.order {
		v := cats.rows[k]
		a.Cats = append(a.Cats, int64(st.id(k)), v[0], v[1])
	}
	for _, k := range models.order {
		v := models.rows[k]
		a.Models = append(a.Models, int64(st.id(k)), int64(v[0]), int64(v[1]), int64(v[2]), int64(v[3]))
		a.ModelCost = append(a.ModelCost, roundUSD(v[4]))
	}
	a.Slots, a.SlotCost = usageSlots(st, m)
	ids := make([]int, 0, len(files))
	for id := range files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f := files[id]
		a.Files = append(a.Files, int64(id), f[0], f[1])
	}
	return a
}

// slotMs is the span the chart over time adds a session's usage up by:
// a quarter of an hour, since every time zone's offset is a whole number
// of them, so that the page can put each on the reader's own day, week or
// month, as `usage` dates each request by its own time (a session across
// midnight is on two days).
const slotMs = 15 * 60 * 1000

// usageSlots are m's tokens and cost by quarter hour and model (modelLabel),
// in the order first seen: [slot, model, tokens] runs and their costs. What
// the totals count beyond the kept events (a map cut at the event cap) is
// on the last request's quarter hour and model, where `usage` puts it. A
// session whose usage is all in the quarter hour it started in has none:
// the page puts such a session, and one with no start time, whole on the
// day it started.
func usageSlots(st *strtab, m *Map) (slots []int64, costs []float64) {
	start, dated := m.Start()
	if !dated {
		return nil, nil
	}
	at := func(t int64) int64 { return floorDiv(start.UnixMilli()+t, slotMs) }
	type key struct {
		slot  int64
		model string
	}
	type use struct {
		key
		tokens int64
		cost   float64
	}
	var uses []use // in the order first seen
	var index map[key]int
	add := func(k key, tokens int64, cost float64) {
		if index == nil {
			index = map[key]int{}
		}
		i, ok := index[k]
		if !ok {
			i, index[k] = len(uses), len(uses)
			uses = append(uses, use{key: k})
		}
		uses[i].tokens, uses[i].cost = uses[i].tokens+tokens, uses[i].cost+cost
	}
	var sumTok int64
	var sumCost float64
	lastT, lastModel := int64(0), firstModel(m)
	for i := range m.Events {
		e := &m.Events[i]
		if e.Kind != "llm" {
			continue
		}
		n := e.In + e.CW + e.CR + e.Out
		sumTok, sumCost = sumTok+n, sumCost+e.Cost
		lastT, lastModel = e.T, modelName(e.Model)
		if n != 0 || e.Cost != 0 {
			add(key{at(e.T), modelLabel(e)}, n, e.Cost)
		}
	}
	if restTok, restCost := m.Totals.Tokens-sumTok, m.Totals.CostUSD-sumCost; restTok > 0 || restCost > 1e-9 {
		add(key{at(lastT), lastModel}, max(restTok, 0), max(restCost, 0))
	}
	first := at(0)
	if !slices.ContainsFunc(uses, func(u use) bool { return u.slot != first }) {
		return nil, nil
	}
	for _, u := range uses {
		slots = append(slots, u.slot, int64(st.id(u.model)), u.tokens)
		costs = append(costs, roundUSD(u.cost))
	}
	return slots, costs
}

// floorDiv is a / b rounded down (a time before the epoch has a negative
// quarter hour).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// repoSep joins a repository's name and a path in a file's label.
const repoSep = "\x00"

// fileLabel names a file across sessions: its repository's name and its
// path joined by a NUL (repoSep), which no directory's name or path on
// disk holds, so that the script splits them back exactly (a ": " may be
// in either); the path alone outside any repository.
func fileLabel(m *Map, repoID, p string) string {
	for _, r := range m.Repos {
		if r.ID == repoID && r.Name != "" {
			return r.Name + repoSep + p
		}
	}
	return p
}

// sessionPage is the data of one session's page, decoded only when the
// page is opened. Its events travel in columns (see columns.go), their
// strings in the page's own table.
type sessionPage struct {
	Lanes    []lane       `json:"lanes"`
	Files    []file       `json:"files"`
	Outside  []outside    `json:"out,omitempty"`
	Strings  []string     `json:"str"`
	Columns  eventColumns `json:"-"` // "ev", see marshal
	Repos    []string     `json:"repos"`
	PathMode string       `json:"pathMode,omitempty"`
	Tasks    int          `json:"tasks,omitempty"`

	// events are the marks as the script rebuilds them from the columns.
	events []event
}

type lane struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind,omitempty"`
	Type     string  `json:"type,omitempty"`
	Model    string  `json:"model,omitempty"` // the map's, else the models of its requests (buildSessionPage)
	Calls    int     `json:"calls"`
	Requests int     `json:"requests"`
	Tokens   int64   `json:"tokens"`
	Cost     float64 `json:"cost"`
	Outcome  string  `json:"outcome,omitempty"`
	Events   int     `json:"events"`
	Errors   int     `json:"errors"`
}

type file struct {
	Path  string `json:"p"`
	Repo  string `json:"r,omitempty"`
	Reads int    `json:"rd"`
	Edits int    `json:"ed"`
	Hits  int    `json:"h"`
	Op    string `json:"op,omitempty"`
}

// outside is one place outside any repository the session touched (a map
// names such a target by its bucket label alone, "/tmp (scratch)", "~"):
// how many of its targets were reads, edits and hits. The files table lists
// these after the files, so that an edit in /tmp is not missing from it.
type outside struct {
	Label string `json:"p"`
	Reads int    `json:"rd"`
	Edits int    `json:"ed"`
	Hits  int    `json:"h"`
}

// event is one timeline mark as the script rebuilds it from the columns:
// its JSON form is the object the page's script works with (short keys,
// empty fields omitted).
type event struct {
	T        int64    `json:"t"`
	Kind     string   `json:"k"`
	Lane     int      `json:"l"`
	Err      int      `json:"e,omitempty"`
	Label    string   `json:"n,omitempty"` // tool, verb, server/tool, model, host, skill, cause
	Tool     string   `json:"tool,omitempty"`
	Cat      string   `json:"cat,omitempty"`
	Files    []int    `json:"f,omitempty"`  // targets that are files: indexes of sessionPage.Files
	Touch    []string `json:"fu,omitempty"` // their touch (read, edit, hit), when any has one
	Outside  []string `json:"tg,omitempty"` // targets outside a repository: their bucket label
	Exit     *int     `json:"x,omitempty"`
	Class    string   `json:"c,omitempty"`
	Source   string   `json:"src,omitempty"`
	RetryOf  *int     `json:"r,omitempty"`
	Attempt  int      `json:"a,omitempty"`
	In       int64    `json:"i,omitempty"`
	CW       int64    `json:"cw,omitempty"`
	CR       int64    `json:"cr,omitempty"`
	Out      int64    `json:"o,omitempty"`
	Cost     float64  `json:"$,omitempty"`
	Latency  *int64   `json:"lat,omitempty"`
	Dur      *int64   `json:"d,omitempty"`
	Ms       int64    `json:"ms,omitempty"`
	OutBytes *int64   `json:"ob,omitempty"`
	Pre      int64    `json:"pre,omitempty"`
	Post     int64    `json:"post,omitempty"`
	Chars    int      `json:"ch,omitempty"`
	Stop     string   `json:"stop,omitempty"`
	Ref      *int     `json:"ref,omitempty"`
}

func buildSessionPage(m *Map) sessionPage {
	p := sessionPage{PathMode: m.Session.PathMode, Tasks: len(m.Tasks), Repos: []string{}}
	laneIdx := map[string]int{}
	for _, a := range m.Agents {
		laneIdx[a.ID] = len(p.Lanes)
		p.Lanes = append(p.Lanes, lane{ID: a.ID, Kind: a.Kind, Type: a.SubagentType, Model: a.Model, Calls: a.Calls,
			Requests: a.Requests, Tokens: a.Tokens, Cost: a.Cost, Outcome: a.Outcome})
	}
	for _, r := range m.Repos {
		p.Repos = append(p.Repos, r.Name)
	}
	repoName := map[string]string{}
	for _, r := range m.Repos {
		repoName[r.ID] = r.Name
	}
	fileIdx := map[int]int{}
	for _, f := range m.Files {
		fileIdx[f.ID] = len(p.Files)
		p.Files = append(p.Files, file{Path: f.Path, Repo: repoName[f.Repo], Reads: f.Reads, Edits: f.Edits, Hits: f.Hits, Op: f.Op})
	}
	p.events = make([]event, len(m.Events))
	outsideIdx := map[string]int{}
	// A lane whose map entry names no model (a main agent's often does not)
	// shows the models its requests used, in the order it first used them,
	// as `agentmap show` does.
	used := make([][]string, len(p.Lanes))
	for i := range m.Events {
		e := &m.Events[i]
		l, ok := laneIdx[e.Lane()]
		if !ok {
			l = len(p.Lanes)
			laneIdx[e.Lane()] = l
			p.Lanes = append(p.Lanes, lane{ID: e.Lane()})
			used = append(used, nil)
		}
		p.Lanes[l].Events++
		if e.Kind == "llm" && e.Model != "" && !slices.Contains(used[l], e.Model) {
			used[l] = append(used[l], e.Model)
		}
		ev := event{T: e.T, Kind: e.Kind, Lane: l, Label: eventLabel(m, e), Cat: e.Cat, Exit: e.ExitCode,
			Class: e.ErrClass, Source: e.Source, RetryOf: e.RetryOf, Attempt: e.Attempt, In: e.In, CW: e.CW,
			CR: e.CR, Out: e.Out, Cost: e.Cost, Latency: e.Latency, Dur: e.Dur, Ms: e.Ms, OutBytes: e.OutBytes,
			Pre: e.PreTokens, Post: e.PostTokens, Chars: e.Chars, Stop: e.Stop, Ref: e.Ref}
		if e.Tool != "" && e.Tool != ev.Label {
			ev.Tool = e.Tool
		}
		if e.Err || e.Kind == "error" {
			ev.Err = 1
			p.Lanes[l].Errors++
		}
		for _, tg := range e.Targets {
			if tg.File == nil {
				s := tg.Label
				if tg.Touch != "" {
					s += " (" + tg.Touch + ")"
				}
				ev.Outside = append(ev.Outside, s)
				o, ok := outsideIdx[tg.Label]
				if !ok {
					o = len(p.Outside)
					outsideIdx[tg.Label] = o
					p.Outside = append(p.Outside, outside{Label: tg.Label})
				}
				switch tg.Touch {
				case "read":
					p.Outside[o].Reads++
				case "edit":
					p.Outside[o].Edits++
				default: // a hit, or a target the map gave no touch
					p.Outside[o].Hits++
				}
				continue
			}
			f, ok := fileIdx[*tg.File]
			if !ok {
				continue
			}
			ev.Files = append(ev.Files, f)
			ev.Touch = append(ev.Touch, tg.Touch)
		}
		p.events[i] = ev
	}
	for l := range p.Lanes {
		if p.Lanes[l].Model == "" {
			p.Lanes[l].Model = strings.Join(used[l], ", ")
		}
	}
	st := newStrtab()
	p.Columns = columnize(p.events, st)
	p.Strings = st.list
	if p.Lanes == nil {
		p.Lanes = []lane{}
	}
	if p.Files == nil {
		p.Files = []file{}
	}
	return p
}

// marshal is the page as JSON, its columns spliced in as they are written
// (through encoding/json, a million events would be checked and copied
// once more).
func (p *sessionPage) marshal() ([]byte, error) {
	head, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	ev, _ := p.Columns.MarshalJSON()
	b := make([]byte, 0, len(head)+len(ev)+8)
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"ev":`...)
	b = append(b, ev...)
	return append(b, '}'), nil
}

// eventLabel is the one name a mark is known by: what ran, or whom. A
// commit or a pull request is known by its repository's name (the event
// holds the map's id of it, r0, which means nothing to a reader) and a pull
// request by its number too.
func eventLabel(m *Map, e *mapfile.Event) string {
	switch e.Kind {
	case "exec", "verify":
		if e.Verb != "" {
			return e.Verb
		}
	case "mcp":
		return e.Server + "/" + e.Tool
	case "llm":
		return e.Model
	case "web":
		if e.Host != "" {
			return e.Host
		}
	case "skill":
		return e.Skill
	case "subagent":
		return e.SubagentType
	case "delay":
		return e.Cause
	case "compaction":
		return e.Trigger
	case "error":
		if e.Hook != "" {
			return e.Hook
		}
		return e.Source
	case "model_switch":
		return e.From + " → " + e.To
	case "commit":
		return repoName(m, e.Repo)
	case "pr_merge", "pr_close", "pr_comment":
		if e.Number > 0 {
			return repoName(m, e.Repo) + " #" + strconv.Itoa(e.Number)
		}
		return repoName(m, e.Repo)
	}
	return e.Tool
}

// repoName is the name of the map's repository id, or the id when the map
// names no such repository.
func repoName(m *Map, id string) string {
	for _, r := range m.Repos {
		if r.ID == id && r.Name != "" {
			return r.Name
		}
	}
	return id
}

// gzips are reused: a new compressor allocates about a megabyte, more
// than most sessions' pages weigh.
var gzips = sync.Pool{New: func() any { zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return zw }}

// packJSON is v as JSON, gzipped and base64-encoded for a script element:
// the page inflates it with the browser's own DecompressionStream.
func packJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return packBytes(b)
}

// packBytes gzips and base64-encodes a JSON document.
func packBytes(doc []byte) (string, error) {
	var buf bytes.Buffer
	b64 := base64.NewEncoder(base64.StdEncoding, &buf)
	zw := gzips.Get().(*gzip.Writer)
	defer gzips.Put(zw)
	zw.Reset(b64)
	if _, err := zw.Write(doc); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	b64.Close()
	return buf.String(), nil
}

func unpackJSON(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("report: data element: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("report: data element: %w", err)
	}
	return io.ReadAll(zr)
}
