package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// system handles harness lines. Only compaction, API retries, turn ends,
// failed or blocking stop hooks and refusal fallbacks matter to a map;
// local_command lines duplicate the user line of the slash command, and
// the other subtypes are notices.
func (p *Parser) system(env *envelope, out []event.Event) []event.Event {
	switch env.Subtype {
	case "compact_boundary":
		var m struct {
			Trigger    json.RawMessage `json:"trigger"`
			PreTokens  json.RawMessage `json:"preTokens"`
			PostTokens json.RawMessage `json:"postTokens"`
			DurationMs json.RawMessage `json:"durationMs"`
		}
		if isObject(env.CompactMetadata) {
			_ = decode(env.CompactMetadata, &m)
		}
		trigger := str(m.Trigger)
		if trigger != "auto" && trigger != "manual" {
			trigger = ""
		}
		e := p.ev(event.KindCompaction)
		e.Compact = &event.Compaction{Trigger: trigger, PreTokens: integer(m.PreTokens), PostTokens: integer(m.PostTokens), Ms: integer(m.DurationMs)}
		return append(out, e)
	case "api_error":
		e := p.ev(event.KindError)
		e.Error = &event.Error{Source: "llm", Class: redact.APIErrorClass(apiErrorSignature(env)),
			SrcUUID: ident(str(env.UUID)), Retry: int(integer(env.RetryAttempt))}
		return append(out, e)
	case "turn_duration":
		return append(out, p.ev(event.KindTurnEnd))
	case "stop_hook_summary":
		class := ""
		switch {
		case boolean(env.PreventedContinuation):
			class = "hook_blocking"
		case isArray(env.HookErrors) && !bytes.Equal(bytes.Join(bytes.Fields(env.HookErrors), nil), []byte("[]")):
			class = "hook_error"
		default:
			return out
		}
		hook := ident(str(env.HookLabel))
		if hook == "" {
			hook = "Stop"
		}
		e := p.ev(event.KindError)
		e.Error = &event.Error{Source: "hook", Class: class, Hook: hook, HookEvent: hookEvent(hook), SrcUUID: ident(str(env.UUID))}
		return append(out, e)
	case "model_refusal_fallback":
		e := p.ev(event.KindError)
		e.Error = &event.Error{Source: "llm", Class: "refusal_fallback", SrcUUID: ident(str(env.UUID))}
		return append(out, e)
	}
	return out
}

// apiErrorSignature collects the identifiers of an API error (status,
// error types, network error code) for classification; messages are not read.
func apiErrorSignature(env *envelope) string {
	var e struct {
		Status json.RawMessage `json:"status"`
		Type   json.RawMessage `json:"type"`
		Error  *struct {
			Type  json.RawMessage `json:"type"`
			Error *struct {
				Type json.RawMessage `json:"type"`
			} `json:"error"`
		} `json:"error"`
		Cause *struct {
			Code json.RawMessage `json:"code"`
		} `json:"cause"`
	}
	var sig []string
	if isObject(env.Error) && decode(env.Error, &e) == nil {
		if s := integer(e.Status); s > 0 {
			sig = append(sig, strconv.FormatInt(s, 10))
		}
		sig = append(sig, ident(str(e.Type)))
		if e.Error != nil {
			sig = append(sig, ident(str(e.Error.Type)))
			if e.Error.Error != nil {
				sig = append(sig, ident(str(e.Error.Error.Type)))
			}
		}
		if e.Cause != nil {
			sig = append(sig, ident(str(e.Cause.Code)))
		}
	} else {
		sig = append(sig, ident(str(env.Error)))
	}
	if isObject(env.Cause) {
		var c struct {
			Code json.RawMessage `json:"code"`
		}
		if decode(env.Cause, &c) == nil {
			sig = append(sig, ident(str(c.Code)))
		}
	}
	return strings.Join(strings.Fields(strings.Join(sig, " ")), " ")
}

// attachment is what an attachment line's attachment tells of a hook;
// the injected context itself (file contents, listings) is stepped over.
type attachment struct {
	Type      string          `json:"type"`
	HookName  json.RawMessage `json:"hookName"`
	HookEvent json.RawMessage `json:"hookEvent"`
	ToolUseID json.RawMessage `json:"toolUseID"`
	ExitCode  json.RawMessage `json:"exitCode"`
}

// attachment handles injected-context lines; only failed or blocking hooks
// yield a record.
func (p *Parser) attachment(env *envelope, out []event.Event) []event.Event {
	if !isObject(env.Attachment) {
		return out
	}
	var a attachment
	if read(attachmentFields, env.Attachment, &a) != nil {
		return out
	}
	var class string
	switch a.Type {
	case "hook_non_blocking_error", "hook_error_during_execution":
		class = "hook_error"
	case "async_hook_response":
		// An async hook cannot block; a non-zero exit is its failure.
		if num(a.ExitCode) == 0 {
			return out
		}
		class = "hook_error"
	case "hook_blocking_error", "hook_stopped_continuation":
		class = "hook_blocking"
	default:
		return out
	}
	hook := ident(str(a.HookName))
	ev := ident(str(a.HookEvent))
	if ev == "" {
		ev = hookEvent(hook)
	}
	e := p.ev(event.KindError)
	e.Error = &event.Error{Source: "hook", Class: class, Hook: hook, HookEvent: ev, SrcUUID: ident(str(env.UUID))}
	if strings.Contains(ev, "ToolUse") { // the hook ran around that call
		e.Error.RefCallID = ident(str(a.ToolUseID))
	}
	return append(out, e)
}

// hookEvent is the event part of a hook name ("PostToolUse:Bash").
func hookEvent(hook string) string {
	ev, _, _ := strings.Cut(hook, ":")
	return ev
}
