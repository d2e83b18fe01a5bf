// Package validate checks an agentplay/v1 map against the published schema
// and against the rules a producer owes beyond it: the redaction contract
// and the cross-references of the format page.
//
// Problems never quote a string of the map that could be text. They name
// the field by its JSON pointer and describe the string by its shape
// (length and word count). Verbs made only of plain lower-case words, field
// names shaped like identifiers and values taken from the schema are the
// only strings a message repeats.
//
// # Rules
//
//	json           not JSON, not one object, bad gzip, data after the map,
//	               a number too large to check
//	schema         the published JSON Schema (builder/schema)
//	unknown-field  a field the schema does not name, at any depth; the
//	               event fields allowed depend on the kind; errorsByClass
//	               keys must be errClass values
//	seq            events[i].seq == i
//	time           t >= 0, non-decreasing, and within session.durationMs
//	duplicate-id   repos[].id, files[].id, agents[].id, tasks[].n
//	agent-ref      events[].agent, events[].child, agents[].parent; subagent
//	               lanes hang off main
//	task-ref       events[].task names a tasks[].n
//	file-ref       targets[].file names a files[].id
//	repo-ref       files[].repo names a repos[].id; a commit's repo is a
//	               repos[].id or owner/name
//	seq-ref        launchSeq (pointing at a subagent event), error and
//	               delay ref, retryOf (pointing back), files[].first,
//	               tasks[] startSeq <= endSeq, prs[].seq
//	verb           at most program, noun and verb; no flag, path, '=',
//	               quote, '$', shell syntax or number; no word after the
//	               subcommand of a known multi-verb tool
//	identifier     a name (model, tool, server, skill, hook, …) of more
//	               than three words is a sentence, and so is one whose
//	               words a character that does not show parts (a
//	               zero-width space) or longer than 256 bytes
//	               (event.Name); turns tasks are "Turn N"
//	absolute-path  any string that starts with / or ~/, has a drive or UNC
//	               path, a file: URL, or an absolute path after a space,
//	               quote or '=' (bucket labels excepted)
//	string-length  more than 200 characters (2048 for PR and artifact
//	               URLs), control characters, invalid UTF-8
//	relative-path  files[].path has no leading /, no .., no backslash
//	dirs-only      in dirs_only mode the file name is •<6 hex digits>
//	hashed         in hashed mode every segment is 10 hex digits
//	remote         owner/name, without a host
//	host           a lower-case host name, an IP address, or "search"
//	url            http(s), no credentials, no spaces
//	totals         the counters events imply, unless session.truncated
//	content-hash   contentHash present and equal to the recomputed hash
//
// # Readings of the format page
//
// totals.calls is accepted both as the count of tool-call events (read,
// search, edit, exec, verify, mcp, skill, subagent, web, tool) and, by the
// letter of the page, as every event but llm, user, compaction, error and
// delay. The repo root "." is a valid path in every mode. The bucket labels
// are the page's list, with "~ (home)" and "~" both accepted for the home
// bucket and ~/.claude accepted with or without an area.
package validate
