// Package redact turns what a log says into what a map may keep: repo
// detection and repo-relative paths, bucket labels outside repos, the three
// path modes, shell verbs, tool classification, URL hosts, and the few
// identifiers a tool result may confirm (PR URLs, commit summaries).
//
// Everything here reads text and returns identifiers only. No function
// returns, logs or puts into an error any part of a command's arguments, a
// path outside the repo-relative form, or a tool output.
//
// Where the format page leaves room, this package decides:
//
// Paths (see Paths):
//   - repos[].name is the base name of the root; for a linked worktree it is
//     the main checkout's name. remote is origin reduced to owner/name (the
//     last two path segments; GitLab subgroups keep the innermost group).
//   - A cwd that does not exist here becomes a root of its own unless it is
//     a home directory, a labelled folder (~/Documents, ~/.claude, …), a
//     temp root or a top-level system directory.
//   - The repo root itself is the path "."; ".." is resolved lexically.
//   - ~/.claude/<area> echoes the first segment under ~/.claude only when it
//     is a plain file name; otherwise the label is ~/.claude.
//
// Shell verbs (see ParseShell):
//   - Words after the program come from fixed per-tool vocabularies; make
//     targets, npm script names and gradle tasks never reach a verb.
//   - gh and glab give "<noun> <verb>" (gh pr create), docker management
//     commands "<group> <command>" (docker compose up): three words at most.
//   - Runners (npx, uv run, poetry run, bundle exec, python -m, …) give the
//     tool they run, so `npx vitest` is a verify command.
//   - Categories: tests and linters are "test"; compilers, builds and type
//     checkers (tsc, mypy, gcc, cargo check) are "build"; installs by package
//     managers are "package". In a list the first verify command gives the
//     verb.
//
// Tool errors (see ErrorClass): an edit whose old text is not in the file is
// validation, not not_found; a user's rejection of a tool call is
// permission_denied; a result that starts with an exit status is exit_code
// whatever the command printed.
//
// API errors (see APIErrorClass): a plan's usage window ("usage limit", "hit
// your limit") is usage_limit, credits and billing are spend_limit, other
// 429s are rate_limit.
package redact
