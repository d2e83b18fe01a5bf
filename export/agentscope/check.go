package agentscope

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Validate applies `agentscope validate`'s structural rules, in its order,
// and returns the first problem in the style of its messages (runs and actions counted
// from 0), or the quality warnings (runs counted from 1) when the trace is
// valid. It decodes the document; traces are one JSON object.
func Validate(data []byte) (warnings []string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("Invalid trace: failed to read or parse")
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("Trace must be a JSON object.")
	}
	if v, ok := top["schemaVersion"].(string); !ok || v != SchemaVersion {
		return nil, errors.New(`schemaVersion must be "1.0.0".`)
	}
	runs, ok := top["runs"].([]any)
	if !ok {
		return nil, errors.New("runs must be an array.")
	}
	if len(runs) == 0 {
		return nil, errors.New("runs must not be empty.")
	}
	for i, r := range runs {
		if err := validateRun(i, r); err != nil {
			return nil, err
		}
	}
	for i, r := range runs {
		warnings = append(warnings, runWarnings(i+1, r.(map[string]any))...)
	}
	return warnings, nil
}

var (
	runStrings    = []string{"id", "title", "agent", "branch", "status", "startedAt", "duration", "cost"}
	actionStrings = []string{"id", "type", "title", "timestamp", "duration", "risk", "summary"}
	statuses      = map[string]bool{"passed": true, "failed": true, "warning": true}
	actionTypes   = map[string]bool{"read_file": true, "edit_file": true, "run_command": true,
		"test_failed": true, "test_passed": true, "generate_summary": true}
	risks = map[string]bool{"low": true, "medium": true, "high": true}
)

func validateRun(i int, v any) error {
	run, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("Run [%d] must be an object.", i)
	}
	for _, k := range runStrings {
		if s, ok := run[k].(string); !ok || s == "" {
			return fmt.Errorf("Run [%d] field %s must be a non-empty string.", i, k)
		}
	}
	if !statuses[run["status"].(string)] {
		return fmt.Errorf("Run [%d] status must be passed, failed or warning.", i)
	}
	if n, ok := run["trustScore"].(float64); !ok || n < 0 || n > 100 {
		return fmt.Errorf("Run [%d] trustScore must be a number between 0 and 100.", i)
	}
	for _, k := range []string{"filesChanged", "commands"} {
		if n, ok := run[k].(float64); !ok || n < 0 {
			return fmt.Errorf("Run [%d] %s must be a non-negative number.", i, k)
		}
	}
	actions, ok := run["actions"].([]any)
	if !ok {
		return fmt.Errorf("Run [%d] actions must be an array.", i)
	}
	for j, a := range actions {
		if err := validateAction(i, j, a); err != nil {
			return err
		}
	}
	return nil
}

func validateAction(i, j int, v any) error {
	a, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("Run [%d], action [%d] must be an object.", i, j)
	}
	for _, k := range actionStrings {
		if s, ok := a[k].(string); !ok || s == "" {
			return fmt.Errorf("Run [%d], action [%d] field %s must be a non-empty string.", i, j, k)
		}
	}
	if !actionTypes[a["type"].(string)] {
		return fmt.Errorf("Run [%d], action [%d] type is not an AgentScope action type.", i, j)
	}
	if !risks[a["risk"].(string)] {
		return fmt.Errorf("Run [%d], action [%d] risk must be low, medium or high.", i, j)
	}
	details, ok := a["details"].([]any)
	if !ok {
		return fmt.Errorf("Run [%d], action [%d] details must be an array of strings.", i, j)
	}
	for _, d := range details {
		if _, ok := d.(string); !ok {
			return fmt.Errorf("Run [%d], action [%d] details must be an array of strings.", i, j)
		}
	}
	for _, k := range []string{"file", "command", "output", "diff"} {
		if v, present := a[k]; present {
			if _, ok := v.(string); !ok {
				return fmt.Errorf("Run [%d], action [%d] %s must be a string when present.", i, j, k)
			}
		}
	}
	return nil
}

// runWarnings are validate's advisory quality warnings for one run.
func runWarnings(n int, run map[string]any) []string {
	var w []string
	edits, verifies, highBare := 0, 0, false
	failedAt, passedAfter := -1, false
	for j, v := range run["actions"].([]any) {
		a := v.(map[string]any)
		switch a["type"] {
		case "edit_file":
			edits++
			if a["risk"] == "high" && len(a["details"].([]any)) == 0 {
				highBare = true
			}
		case "run_command":
			verifies++
		case "test_failed":
			verifies++
			if failedAt < 0 {
				failedAt = j
			}
		case "test_passed":
			verifies++
			if failedAt >= 0 {
				passedAfter = true
			}
		}
	}
	if edits > 0 && verifies == 0 {
		w = append(w, fmt.Sprintf("Run [%d]: Run has %d edit(s) but no verification command was run.", n, edits))
	}
	if failedAt >= 0 && !passedAfter {
		w = append(w, fmt.Sprintf("Run [%d]: Run has failed test(s) with no later passing test.", n))
	}
	if highBare {
		w = append(w, fmt.Sprintf("Run [%d]: Run has high-risk edit(s) with no evidence notes.", n))
	}
	return w
}
