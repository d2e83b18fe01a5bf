package redact

import (
	"strings"
	"testing"
)

func TestErrorClass(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Exit code 1\nFAIL src/x.test.ts", "exit_code"},
		{"Exit code 127\nbash: foo: command not found", "exit_code"},
		{"Exit code 1\nPermission denied (publickey).", "exit_code"},
		{"Error: Exit code 2\nNo such file or directory", "exit_code"},
		{"Exit code: 1\nWall time: 0.4 seconds\nOutput:\n", "exit_code"},
		{"Chunk ID: 1\nWall time: 1.0 seconds\nProcess exited with code 2\nOutput:\n", "exit_code"},
		{"Command timed out after 2m 0.0s", "timeout"},
		{"Exit code 143\nCommand timed out after 120000ms", "timeout"},
		{"<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", "stale_file"},
		{"File has been modified since read, either by the user or by a linter.", "stale_file"},
		{"<tool_use_error>String to replace not found in file.\nString: secret</tool_use_error>", "validation"},
		{"Found 3 matches of the string to replace, but replace_all is false.", "validation"},
		{"InputValidationError: Edit failed due to the following issue: The required parameter `old_string` is missing", "validation"},
		{"failed to parse function arguments: missing field `cmd`", "validation"},
		{"Permission to use Bash has been denied.", "permission_denied"},
		{"The user doesn't want to proceed with this tool use. The tool use was rejected.", "permission_denied"},
		{"EACCES: permission denied, open '/etc/x'", "permission_denied"},
		{"This command requires approval", "needs_approval"},
		{"Claude requested permissions to write to /x, but you haven't granted it yet.", "needs_approval"},
		{"Hook PreToolUse:Bash denied this tool", "blocked"},
		{"PreToolUse:Bash hook error: Blocked by policy", "blocked"},
		{"[Request interrupted by user for tool use]", "interrupted"},
		{"Interrupted by user", "interrupted"},
		{"apply_patch verification failed: Failed to find expected lines", "patch_failed"},
		{"File does not exist.", "not_found"},
		{"ENOENT: no such file or directory, stat 'x'", "not_found"},
		{"<tool_use_error>Path not found</tool_use_error>", "not_found"},
		{"Error: browser has been closed", "browser"},
		{"model_not_found: the model does not exist", "model_unavailable"},
		{"Rate limit exceeded, retry later", "rate_limit"},
		{"API Error: 500 Internal server error", "api_error"},
		{"Subagent failed to complete", "subagent_failed"},
		{"Agent was killed", "subagent_killed"},
		{"Tool returned no result", "no_result"},
		{"something odd happened", "other"},
		{"", "other"},
		{strings.Repeat("x", 5000) + "No such file", "other"},
	}
	for _, tt := range tests {
		if got := ErrorClass(tt.text); got != tt.want {
			t.Errorf("ErrorClass(%.60q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestAPIErrorClass(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Claude AI usage limit reached|1767225600", "usage_limit"},
		{"You've hit your limit · resets 3pm", "usage_limit"},
		{"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}", "rate_limit"},
		{"rate_limit", "rate_limit"},
		{"429", "rate_limit"},
		{"Your credit balance is too low to access the Anthropic API", "spend_limit"},
		{"You exceeded your current quota, please check your plan and billing details", "spend_limit"},
		{"billing_error", "spend_limit"},
		{"API Error: 529 Overloaded", "overloaded"},
		{"overloaded_error", "overloaded"},
		{"API Error: 500 {\"type\":\"api_error\",\"message\":\"Internal server error\"}", "server_error"},
		{"503", "server_error"},
		{"server_error", "server_error"},
		{"401 Unauthorized", "auth"},
		{"Invalid API key · Please run /login", "auth"},
		{"authentication_failed", "auth"},
		{"403", "auth"},
		{"400 invalid_request_error: prompt is too long", "bad_request"},
		{"invalid_request", "bad_request"},
		{"Request was aborted.", "interrupted"},
		{"unknown", "api_error"},
		{"", "api_error"},
		{"error 4290 happened", "api_error"},
	}
	for _, tt := range tests {
		if got := APIErrorClass(tt.text); got != tt.want {
			t.Errorf("APIErrorClass(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
