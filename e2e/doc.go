// Package e2e drives the real Claude Code and Codex CLIs against scripted
// model servers on 127.0.0.1 while agentmap follows their logs, and compares
// the maps it writes with what the scripts made happen.
//
// The test runs only with AGENTMAP_E2E=1 and the clients installed (see
// run.sh); otherwise it skips with a message saying why.
package e2e
