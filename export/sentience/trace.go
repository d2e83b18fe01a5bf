// Package sentience converts agentplay/v1 maps into Sentience agent trace
// v1 JSON lines: run_start, a step per user turn, an action per tool call,
// llm_called per model request, verification per test or build, error per
// failure, run_end. Where the trace wants text (a goal, a response) it gets
// the map's turn name or a hash, never the text, which the map never had.
package sentience

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/mapfile"
)

// Line is one trace event.
type Line struct {
	V      int            `json:"v"`
	Type   string         `json:"type"`
	TS     string         `json:"ts"`
	TSMs   int64          `json:"ts_ms"`
	RunID  string         `json:"run_id"`
	Seq    int            `json:"seq"`
	StepID *string        `json:"step_id,omitempty"`
	Data   map[string]any `json:"data"`
}

// Options configure a stream.
type Options struct {
	// Undated is the base time of maps with no time at all.
	Undated time.Time
}

// Writer writes trace lines, one map at a time.
type Writer struct {
	bw    *bufio.Writer
	opts  Options
	lines int
	err   error
}

// NewWriter starts a stream on w.
func NewWriter(w io.Writer, o Options) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), opts: o}
}

// Add writes the run of one map.
func (w *Writer) Add(m *mapfile.Map) error {
	if w.err != nil {
		return w.err
	}
	for _, l := range Convert(m, w.opts) {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("sentience: session %s: %w", m.Session.ID, err)
		}
		if _, err := w.bw.Write(append(b, '\n')); err != nil {
			w.err = err
			return err
		}
		w.lines++
	}
	return nil
}

// Close flushes the stream.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// Lines is the number of lines written.
func (w *Writer) Lines() int { return w.lines }

// RunID is the run's UUID: AttemptDB's session id of the same session, so
// the two exports of one session name it alike.
func RunID(m *mapfile.Map) string {
	return attemptdb.SessionID(attemptdb.ProviderOf(m.Session.AgentTool), m.Session.NativeID())
}

type run struct {
	m       *mapfile.Map
	runID   string
	base    time.Time
	seq     int
	steps   int
	step    string // current step id
	stepN   int    // current task number; -1 before any step
	taskOf  map[int]mapfile.Task
	lines   []Line
	started map[int]bool
}

// Convert returns the lines of one run.
func Convert(m *mapfile.Map, o Options) []Line {
	r := &run{m: m, runID: RunID(m), stepN: -1, taskOf: map[int]mapfile.Task{}, started: map[int]bool{}}
	if start, ok := m.Start(); ok {
		r.base = start
	} else {
		r.base = o.Undated.UTC()
	}
	for _, t := range m.Tasks {
		r.taskOf[t.N] = t
	}
	r.runStart()
	for i := range m.Events {
		r.event(&m.Events[i])
	}
	r.runEnd()
	return r.lines
}

func (r *run) add(typ string, t int64, step bool, data map[string]any) {
	r.seq++
	at := r.base.Add(time.Duration(t) * time.Millisecond)
	data["timestamp"] = t
	l := Line{V: 1, Type: typ, TS: at.Format("2006-01-02T15:04:05.000Z07:00"), TSMs: at.UnixMilli(),
		RunID: r.runID, Seq: r.seq, Data: data}
	if step {
		id := r.step
		l.StepID = &id
	}
	r.lines = append(r.lines, l)
}

// lane is the agent object of step-scoped payloads. An object, not the
// string run_start uses, so that no payload but run_start's matches the
// schema's run_start branch (see docs/exports.md).
func lane(e *mapfile.Event, m *mapfile.Map) map[string]any {
	o := map[string]any{"id": e.Lane(), "kind": "main"}
	if e.Lane() != "main" {
		o["kind"] = "subagent"
		for _, a := range m.Agents {
			if a.ID == e.Lane() && a.SubagentType != "" {
				o["subagent_type"] = a.SubagentType
			}
		}
	}
	return o
}

func mainLane() map[string]any { return map[string]any{"id": "main", "kind": "main"} }

func (r *run) runStart() {
	s := r.m.Session
	var model any
	if len(s.Models) > 0 {
		model = s.Models[0]
	}
	cfg := map[string]any{"session_id": s.ID, "path_mode": s.PathMode, "role": s.Role,
		"content_hash": r.m.ContentHash, "models": s.Models, "truncated": s.Truncated}
	r.add("run_start", 0, false, map[string]any{"agent": s.AgentTool, "llm_model": model, "config": cfg})
}

func (r *run) runEnd() {
	r.add("run_end", r.m.Session.DurationMs, false, map[string]any{
		"steps": r.steps, "status": runStatus(r.m.Session.Outcome), "agent": mainLane(),
	})
}

func runStatus(outcome string) string {
	switch outcome {
	case "pr_created", "verified", "completed":
		return "success"
	case "unresolved_errors", "blocked":
		return "failure"
	case "interrupted", "incomplete":
		return "partial"
	}
	return "unknown"
}

// enterStep opens the step of task n (0: the part of the session before
// the first user turn) the first time one of its events is seen.
func (r *run) enterStep(n int, t int64) {
	if n == r.stepN || r.started[n] {
		if n != r.stepN {
			r.stepN, r.step = n, r.stepID(n)
		}
		return
	}
	r.started[n] = true
	r.stepN, r.step = n, r.stepID(n)
	r.steps++
	goal := "Before the first turn"
	if task, ok := r.taskOf[n]; ok && task.Name != "" {
		goal = task.Name
		t = min(t, task.StartT)
	} else if n > 0 {
		goal = "Turn " + strconv.Itoa(n)
	}
	r.add("step_start", t, true, map[string]any{
		"step_id": r.step, "step_index": n, "goal": goal, "attempt": 1, "agent": mainLane(),
	})
}

func (r *run) stepID(n int) string {
	return attemptdb.Derive("spn_", r.runID, "step", strconv.Itoa(n))
}

func (r *run) event(e *mapfile.Event) {
	switch {
	case e.IsCall():
		r.enterStep(e.Task, e.T)
		r.action(e)
	case e.Kind == "llm":
		r.enterStep(e.Task, e.T)
		r.llm(e)
	case e.Kind == "error":
		r.enterStep(e.Task, e.T)
		r.add("error", e.T, true, map[string]any{
			"step_id": r.step, "error": token(e.ErrClass), "attempt": e.Retry + 1,
			"source": e.Source, "agent": lane(e, r.m),
		})
	case e.Kind == "user":
		r.enterStep(e.Task, e.T)
	}
}

func (r *run) action(e *mapfile.Event) {
	d := map[string]any{
		// agent is the lane id as a string: actions have no branch of
		// their own and take the schema's free-form run_start branch.
		"agent": e.Lane(), "step_id": r.step, "action": e.Kind, "success": !e.Err,
	}
	set := func(k, v string) {
		if v != "" {
			d[k] = v
		}
	}
	set("tool", e.Tool)
	set("category", e.Cat)
	set("verb", e.Verb)
	set("server", e.Server)
	set("skill", e.Skill)
	set("subagent_type", e.SubagentType)
	set("host", e.Host)
	set("error_class", e.ErrClass)
	if e.Dur != nil {
		d["duration_ms"] = *e.Dur
	}
	if e.OutBytes != nil {
		d["output_bytes"] = *e.OutBytes
	}
	if e.ExitCode != nil {
		d["exit_code"] = *e.ExitCode
	}
	if len(e.Targets) > 0 {
		var targets []map[string]any
		for _, t := range e.Targets {
			o := map[string]any{"touch": t.Touch}
			if t.File != nil {
				if p, ok := r.m.FilePath(*t.File); ok {
					o["path"] = p
				}
			} else if t.Label != "" {
				o["label"] = t.Label
			}
			targets = append(targets, o)
		}
		d["targets"] = targets
	}
	r.add("action", e.T, true, d)
	if e.Kind == "verify" {
		label := e.Verb
		if label == "" {
			label = e.Tool
		}
		r.add("verification", e.T, true, map[string]any{
			"step_id": r.step, "passed": !e.Err, "kind": "assert", "label": label, "required": false,
			"agent": lane(e, r.m),
		})
	}
	if e.Err {
		r.add("error", e.T, true, map[string]any{
			"step_id": r.step, "error": token(e.ErrClass), "attempt": max(e.Attempt, 1),
			"source": e.Kind, "agent": lane(e, r.m),
		})
	}
}

func (r *run) llm(e *mapfile.Event) {
	prompt := e.In + e.CW + e.CR
	d := map[string]any{
		"step_id": r.step, "response_text": "", "response_hash": llmHash(r.m.Session.ID, e),
		"agent": lane(e, r.m),
	}
	// A request whose log recorded no usage has none (the schema's usage
	// is optional), not a usage of 0 tokens.
	if !e.NoUsage() {
		d["usage"] = map[string]any{"prompt_tokens": prompt, "completion_tokens": e.Out, "total_tokens": prompt + e.Out}
	}
	if e.Model != "" {
		d["model"] = e.Model
	}
	r.add("llm_called", e.T, true, d)
}

// llmHash stands for the response text the trace wants and the map never
// had: sha256 of the session id and the canonical JSON of the request's
// metadata, so equal requests hash alike and the hash reveals nothing.
func llmHash(session string, e *mapfile.Event) string {
	meta := map[string]any{"session": session, "seq": e.Seq, "t": e.T, "model": e.Model,
		"in": e.In, "cw": e.CW, "cr": e.CR, "out": e.Out, "stop": e.Stop, "textChars": e.TextChars,
		"toolCalls": e.ToolCalls, "thinking": e.Thinking}
	b, _ := builder.CanonicalJSON(meta)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func token(class string) string {
	if class == "" {
		return "other"
	}
	return class
}
