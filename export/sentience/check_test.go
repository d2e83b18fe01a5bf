package sentience

import (
	"strconv"
	"strings"
	"testing"
)

const (
	testRun = "951ad969-3305-500f-89b8-a3ee9996389d"
	step    = "459d482c-79cf-529c-b264-d9b00a7ec87a"
)

func line(typ string, seq int, stepID, data string) string {
	s := `{"v":1,"type":"` + typ + `","ts":"2026-01-01T00:00:00.000Z","ts_ms":1767225600000,"run_id":"` + testRun + `","seq":` + itoa(seq)
	if stepID != "" {
		s += `,"step_id":"` + stepID + `"`
	}
	return s + `,"data":` + data + "}\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCheck(t *testing.T) {
	start := line("run_start", 1, "", `{"agent":"codex","timestamp":0}`)
	stepStart := line("step_start", 2, step, `{"step_id":"`+step+`","step_index":1,"goal":"Turn 1","attempt":1,"timestamp":0}`)
	action := line("action", 3, step, `{"step_id":"`+step+`","agent":"main","timestamp":0}`)
	end := line("run_end", 4, "", `{"steps":1,"timestamp":0}`)
	if probs, err := Check(strings.NewReader(start + stepStart + action + end)); err != nil || len(probs) > 0 {
		t.Fatalf("valid trace: %v %v", err, probs)
	}
	tests := map[string]string{
		"seq gap":          start + stepStart + strings.Replace(action, `"seq":3`, `"seq":5`, 1) + end,
		"no run_start":     stepStart + action + end,
		"no run_end":       start + stepStart + action,
		"steps miscounted": start + stepStart + action + strings.Replace(end, `"steps":1`, `"steps":2`, 1),
		"step not started": start + action + strings.Replace(end, `"steps":1`, `"steps":0`, 1),
		"step id not uuid": start + strings.ReplaceAll(stepStart, step, "step-1") + end,
		"data step differs": start + stepStart +
			strings.Replace(action, `"step_id":"`+step+`","agent"`, `"step_id":"x","agent"`, 1) + end,
		"missing required": start + strings.Replace(stepStart, `"goal":"Turn 1",`, "", 1) + action + end,
		"bad ts":           strings.Replace(start, "2026-01-01T00:00:00.000Z", "yesterday", 1) + stepStart + action + end,
		"v is 2":           strings.Replace(start, `"v":1`, `"v":2`, 1) + stepStart + action + end,
	}
	for name, trace := range tests {
		probs, err := Check(strings.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}
