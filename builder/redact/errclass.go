package redact

import "strings"

// errScan bounds how much of a result text is read to classify it: the
// agents put their own message first, and a command's output after it
// must not decide the class.
const errScan = 2048

// errRule maps any of its phrases (lower case) to a class.
type errRule struct {
	class   string
	phrases []string
}

// toolRules are tried in order on the head of a failed tool result. The
// agents' own messages come first; generic words (not found, denied) last.
var toolRules = []errRule{
	{"interrupted", []string{"[request interrupted", "interrupted by user", "[tool call interrupted",
		"[agent call interrupted", "[this turn ended before", "[tool call did not complete",
		"aborted by user", "was interrupted"}},
	{"stale_file", []string{"file has not been read yet", "modified since read", "has been modified since",
		"file has been unexpectedly modified", "read it first before"}},
	{"patch_failed", []string{"apply_patch verification failed", "failed to apply patch", "patch failed",
		"invalid patch", "could not apply patch", "patch does not apply", "invalid hunk"}},
	{"subagent_killed", []string{"agent was killed", "agent killed", "subagent killed", "agent was stopped"}},
	{"subagent_failed", []string{"agent failed", "subagent failed", "subagent error"}},
	// An edit whose old text is not in the file is a precondition of the
	// input, not a missing resource: validation.
	{"validation", []string{"inputvalidationerror", "input validation", "validation error", "invalid_type",
		"string to replace not found", "old_string not found", "found multiple matches", "matches of the string to replace",
		"failed to parse function arguments", "invalid arguments", "invalid input", "missing required",
		"required parameter", "unexpected parameter", "is not a valid", "must be a"}},
	{"needs_approval", []string{"requires approval", "approval required", "needs approval",
		"waiting for approval", "requires user approval", "escalated permissions",
		"haven't granted it yet", "requested permissions"}},
	{"permission_denied", []string{"permission to use", "has been denied", "permission denied",
		"doesn't want to proceed", "does not want to proceed", "tool use was rejected", "rejected by user",
		"user denied", "user rejected", "eacces", "operation not permitted", "access is denied",
		"access denied", "not permitted"}},
	{"blocked", []string{"blocked by", "hook blocked", "was blocked", "is blocked", "blocked:", "denied this tool",
		"blocking error", "sandbox denied", "not allowed"}},
	{"timeout", []string{"timed out", "timeout", "deadline exceeded", "took too long"}},
	{"browser", []string{"browser has been closed", "browser is not", "no browser", "browser not",
		"browser closed", "browser disconnected"}},
	{"model_unavailable", []string{"model not found", "model_not_found", "model is not available",
		"unknown model", "does not have access to model", "model unavailable"}},
	{"rate_limit", []string{"rate limit", "rate_limit", "too many requests", "usage limit", "hit your limit"}},
	{"api_error", []string{"api error", "api_error", "internal server error", "overloaded",
		"service unavailable", "bad gateway"}},
	{"no_result", []string{"no result", "returned no output", "tool result missing", "no response"}},
	{"not_found", []string{"no such file", "does not exist", "not found", "enoent", "cannot find",
		"could not find", "can't find", "unable to find", "no matches found", "404"}},
	{"exit_code", []string{"exit code", "exited with", "exit status", "non-zero", "nonzero", "returned 1"}},
}

// ErrorClass maps the text of a failed tool result to one of the format
// page's tool errClass values: exit_code, timeout, not_found, validation,
// needs_approval, permission_denied, blocked, browser, patch_failed,
// stale_file, model_unavailable, rate_limit, api_error, interrupted,
// no_result, subagent_failed, subagent_killed or other. The text is read,
// never kept.
//
// A result that starts with a shell exit status ("Exit code 2", Codex's
// "Exit code: 2", "Process exited with code 2") is exit_code whatever the
// command printed after it, unless the agent says the command timed out.
func ErrorClass(text string) string {
	head := lowerHead(text, errScan)
	head = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(head), "<tool_use_error>"))
	head = strings.TrimPrefix(head, "error: ")
	if startsExit(head) {
		if strings.Contains(firstLines(head, 3), "timed out") {
			return "timeout"
		}
		return "exit_code"
	}
	for _, r := range toolRules {
		for _, ph := range r.phrases {
			if strings.Contains(head, ph) {
				return r.class
			}
		}
	}
	return "other"
}

func startsExit(head string) bool {
	for _, p := range [...]string{"exit code", "process exited with code", "command failed with exit code", "exit status"} {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	// Codex unified exec puts "Chunk ID"/"Wall time" lines before the code.
	return strings.Contains(firstLines(head, 4), "process exited with code")
}

func firstLines(s string, n int) string {
	end := 0
	for i := 0; i < n; i++ {
		k := strings.IndexByte(s[end:], '\n')
		if k < 0 {
			return s
		}
		end += k + 1
	}
	return s[:end]
}

// lowerHead lower-cases at most n bytes from the start of s.
func lowerHead(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToLower(s)
}

// apiRules are tried in order: a usage limit arrives as a 429, a credit
// problem as a 400, so the specific classes come before the status codes.
var apiRules = []struct {
	class   string
	phrases []string
	codes   []string
}{
	{"usage_limit", []string{"usage limit", "hit your limit", "usage_limit", "limit reached|", "weekly limit", "session limit"}, nil},
	{"spend_limit", []string{"spend limit", "credit balance", "billing", "insufficient_quota", "exceeded your current quota", "payment required", "out of credits"}, []string{"402"}},
	{"rate_limit", []string{"rate_limit", "rate limit", "too many requests", "ratelimit"}, []string{"429"}},
	{"overloaded", []string{"overloaded"}, []string{"529"}},
	{"auth", []string{"authentication", "unauthorized", "forbidden", "invalid api key", "invalid x-api-key",
		"api key", "oauth", "permission_error", "account_on_hold", "verification_required", "credential",
		"not logged in", "please run /login", "token expired", "token has expired"}, []string{"401", "403"}},
	{"server_error", []string{"internal server error", "server_error", "bad gateway", "service unavailable",
		"gateway timeout", "upstream", "internal error"}, []string{"500", "502", "503", "504"}},
	{"bad_request", []string{"invalid_request", "bad request", "prompt is too long", "context_length_exceeded",
		"context length", "max_output_tokens", "model_not_found", "not_found_error", "invalid request"}, []string{"400", "404", "413", "422"}},
	{"interrupted", []string{"interrupted", "aborted"}, nil},
}

// APIErrorClass maps an API error (status, error type or message) to one of
// the error-event classes: usage_limit (a plan's usage window: "usage
// limit", "hit your limit"), spend_limit (credits, billing, quota),
// rate_limit, overloaded, server_error, auth, bad_request, interrupted, or
// api_error.
func APIErrorClass(text string) string {
	head := lowerHead(text, errScan)
	for _, r := range apiRules {
		for _, ph := range r.phrases {
			if strings.Contains(head, ph) {
				return r.class
			}
		}
		for _, c := range r.codes {
			if hasCode(head, c) {
				return r.class
			}
		}
	}
	return "api_error"
}

// hasCode reports whether s contains the status code c as a whole number.
func hasCode(s, c string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], c)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(c)
		if (at == 0 || !isDigit(s[at-1])) && (end == len(s) || !isDigit(s[end])) {
			return true
		}
		i = at + 1
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
