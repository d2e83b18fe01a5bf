// Package redact turns what a log says into what a map may keep: repo
// detection and repo-relative paths, bucket labels outside repos, the three
// path modes, shell verbs, tool classification, URL hosts, and the few
// identifiers a tool result may confirm (PR URLs, commit summaries).
package redact
