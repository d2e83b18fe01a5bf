package builder

// Outcomes of the format page, first matching rule wins.
const (
	OutcomePRCreated        = "pr_created"
	OutcomeInterrupted      = "interrupted"
	OutcomeBlocked          = "blocked"
	OutcomeVerified         = "verified"
	OutcomeUnresolvedErrors = "unresolved_errors"
	OutcomeIncomplete       = "incomplete"
	OutcomeCompleted        = "completed"
)

// Outcomes lists every outcome, in the order of the rules.
var Outcomes = []string{OutcomePRCreated, OutcomeInterrupted, OutcomeBlocked, OutcomeVerified,
	OutcomeUnresolvedErrors, OutcomeIncomplete, OutcomeCompleted}

const outcomeWindow = 12

// outcome applies the seven rules to one lane's events in map order.
func outcome(events []*Event, prCreated bool) string {
	if prCreated {
		return OutcomePRCreated
	}
	errs := 0
	interrupted, blocked := false, false
	for _, e := range events[max(0, len(events)-outcomeWindow):] {
		if !e.Err {
			continue
		}
		errs++
		switch e.ErrClass {
		case "interrupted":
			interrupted = true
		case "blocked", "permission_denied":
			blocked = true
		}
	}
	if interrupted {
		return OutcomeInterrupted
	}
	if blocked {
		return OutcomeBlocked
	}
	lastVerify, lastEdit, lastEditOrExec, lastText := -1, -1, -1, -1
	for i, e := range events {
		switch e.Kind {
		case "verify":
			lastVerify = i
		case "edit":
			lastEdit, lastEditOrExec = i, i
		case "exec":
			lastEditOrExec = i
		case "llm":
			if e.TextChars > 0 {
				lastText = i
			}
		}
	}
	if lastVerify >= 0 && !events[lastVerify].Err && lastEdit < lastVerify {
		return OutcomeVerified
	}
	if errs >= 2 {
		return OutcomeUnresolvedErrors
	}
	// The lane ends on an edit or exec: no assistant text after the last one.
	if lastEditOrExec >= 0 && lastText < lastEditOrExec {
		return OutcomeIncomplete
	}
	return OutcomeCompleted
}
