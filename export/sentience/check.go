package sentience

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"
)

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	hashPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	types       = map[string]bool{"run_start": true, "step_start": true, "snapshot": true, "snapshot_taken": true,
		"llm_called": true, "llm_response": true, "action": true, "action_executed": true, "verification": true,
		"recovery": true, "step_end": true, "run_end": true, "error": true}
	// required payload fields of the types that have a branch of their own.
	required = map[string][]string{
		"step_start":   {"step_id", "step_index", "goal", "attempt"},
		"llm_called":   {"step_id", "response_text", "response_hash"},
		"step_end":     {"step_id", "step_index", "goal", "attempt", "pre", "llm", "exec", "post", "verify"},
		"verification": {"step_id", "passed"},
		"recovery":     {"step_id", "strategy"},
		"run_end":      {"steps"},
		"error":        {"step_id", "error"},
	}
)

type runState struct {
	seq        int
	ended      bool
	steps      map[string]bool
	stepStarts int
}

type checker struct {
	runs     map[string]*runState
	problems []string
}

func (c *checker) bad(line int, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// Check verifies the stream rules a trace keeps beyond its schema:
// envelope fields, per-run seq strictly increasing from 1, every run opened
// by run_start and closed by run_end whose steps equals its step_start
// count, every step-scoped event naming a started step, and each payload
// carrying the required fields of its type's branch. It returns the
// problems, each with its line number (never line content).
func Check(r io.Reader) ([]string, error) {
	c := &checker{runs: map[string]*runState{}}
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	for {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			n++
			if len(bytes.TrimSpace(raw)) > 0 {
				c.line(n, raw)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace at line %d: %w", n+1, err)
		}
	}
	for id, st := range c.runs {
		if !st.ended {
			c.bad(n, "run %s has no run_end", id)
		}
	}
	return c.problems, nil
}

func (c *checker) line(n int, raw []byte) {
	var l struct {
		V      *int           `json:"v"`
		Type   string         `json:"type"`
		TS     string         `json:"ts"`
		TSMs   *int64         `json:"ts_ms"`
		RunID  string         `json:"run_id"`
		Seq    *int           `json:"seq"`
		StepID *string        `json:"step_id"`
		Data   map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		c.bad(n, "not a trace event object")
		return
	}
	if l.V == nil || *l.V != 1 {
		c.bad(n, "v is not 1")
	}
	if !types[l.Type] {
		c.bad(n, "type is not a trace event type")
	}
	ts, err := time.Parse(time.RFC3339Nano, l.TS)
	if err != nil {
		c.bad(n, "ts is not an RFC 3339 date-time")
	} else if l.TSMs != nil && ts.UnixMilli() != *l.TSMs {
		c.bad(n, "ts_ms does not equal ts")
	}
	if !uuidPattern.MatchString(l.RunID) {
		c.bad(n, "run_id is not a lowercase UUID")
	}
	if l.StepID != nil && !uuidPattern.MatchString(*l.StepID) {
		c.bad(n, "step_id is not a lowercase UUID")
	}
	if l.Data == nil {
		c.bad(n, "data is not an object")
		return
	}
	for _, k := range required[l.Type] {
		if _, ok := l.Data[k]; !ok {
			c.bad(n, "%s data lacks %s", l.Type, k)
		}
	}
	if h, ok := l.Data["response_hash"].(string); ok && !hashPattern.MatchString(h) {
		c.bad(n, "response_hash is not sha256:<hex>")
	}
	st := c.runs[l.RunID]
	if l.Type == "run_start" {
		if st != nil {
			c.bad(n, "second run_start for a run")
		}
		st = &runState{steps: map[string]bool{}}
		c.runs[l.RunID] = st
	}
	if st == nil {
		c.bad(n, "event before its run's run_start")
		return
	}
	if st.ended {
		c.bad(n, "event after its run's run_end")
	}
	if l.Seq == nil || *l.Seq != st.seq+1 {
		c.bad(n, "seq does not follow the run's previous seq by one")
	}
	if l.Seq != nil {
		st.seq = *l.Seq
	}
	stepScoped := l.Type != "run_start" && l.Type != "run_end"
	if stepScoped {
		if l.StepID == nil {
			c.bad(n, "%s without step_id", l.Type)
		} else {
			if ds, _ := l.Data["step_id"].(string); ds != *l.StepID {
				c.bad(n, "data.step_id differs from step_id")
			}
			if l.Type == "step_start" {
				if st.steps[*l.StepID] {
					c.bad(n, "step started twice")
				}
				st.steps[*l.StepID] = true
				st.stepStarts++
			} else if !st.steps[*l.StepID] {
				c.bad(n, "%s in a step that was not started", l.Type)
			}
		}
	}
	if l.Type == "run_end" {
		st.ended = true
		if steps, ok := l.Data["steps"].(float64); !ok || int(steps) != st.stepStarts {
			c.bad(n, "run_end steps does not count the run's step_start events")
		}
	}
}
