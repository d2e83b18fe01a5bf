package attemptdb

import "strings"

// allowedAttrKeys is AttemptDB's ALLOWED_ATTR_KEYS (76 keys).
var allowedAttrKeys = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		tool_input_bytes tool_output_bytes prompt_chars message_chars file_count line_count exit_code
		duration_ms permission_mode permission_decision notification_type stop_reason compaction_trigger
		task_status subagent_type model cwd_logical capture_gap consent_version coverage_grade git_dirty
		path_extensions matcher hook_event_name
		source reason trigger stop_hook_active cwd transcript_present prompt_lines prompt_has_code_fence
		prompt_has_question prompt_kind prompt_source command_bytes command_category command_subcategory
		git_subcommand file_ext file_is_test file_is_config file_is_doc lines_added lines_removed edit_count
		attachment_count image_count error_class error_bytes is_subagent agent_type task_id previous_cwd
		worktree_path config_source tool_output_truncated entrypoint pre_tokens post_tokens output_tokens
		provider
		adapter_error
		reconstructed reconstructed_from transcript_entry_type is_sidechain turn_index_hint
		correction_type target target_type outcome note_chars
		hook_us
		device_seq
		redactions`) {
		allowedAttrKeys[k] = true
	}
}

// AttrKeyAllowed is the Extensions rule for an attrs key: on the allowlist,
// or a provider extension x_<provider>_<name> of [a-z0-9_].
func AttrKeyAllowed(k string) bool {
	if allowedAttrKeys[k] {
		return true
	}
	rest, ok := strings.CutPrefix(k, "x_")
	if !ok || !lowerIdent(rest) {
		return false
	}
	provider, name, ok := strings.Cut(rest, "_")
	return ok && provider != "" && name != ""
}

// topKeyAllowed is the rule for unknown top-level keys: x_<name>.
func topKeyAllowed(k string) bool {
	rest, ok := strings.CutPrefix(k, "x_")
	return ok && rest != "" && lowerIdent(rest)
}

func lowerIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValueAllowed is the content-free rule for an attrs string: at most 256
// bytes, one line, not an email address, no home-directory path.
func ValueAllowed(s string) bool {
	if len(s) > 256 || strings.ContainsAny(s, "\n\r") || looksLikeEmail(s) {
		return false
	}
	return !HasHomePath(s)
}

// HasHomePath reports a home-directory path anywhere in s: /Users/,
// /home/, or a drive letter followed by :\Users\ in either slash.
func HasHomePath(s string) bool {
	if strings.Contains(s, "/Users/") || strings.Contains(s, "/home/") {
		return true
	}
	for i := 0; i+1 < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') || s[i+1] != ':' {
			continue
		}
		rest := s[i+2:]
		if len(rest) >= 7 && isSlash(rest[0]) && rest[1:6] == "Users" && isSlash(rest[6]) {
			return true
		}
	}
	return false
}

func isSlash(c byte) bool { return c == '/' || c == '\\' }

func looksLikeEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || domain == "" {
		return false
	}
	for _, c := range local {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._%+-", c)) {
			return false
		}
	}
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return false
	}
	for _, c := range domain {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
