package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	fc "github.com/agentmap/agentmap/e2e/fakechat"
	"github.com/agentmap/agentmap/watchers/copilot"
)

type copilotRun struct {
	srv     *fc.Server
	mainID  string
	main    *expect
	subType string
}

// newUUID is a random version 4 uuid: Copilot CLI takes the id of a new
// session from --session-id.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// runCopilot runs Copilot CLI with a BYOK provider (its documented
// COPILOT_PROVIDER_* settings) in offline mode: no GitHub account, no
// network beyond the fake server.
func runCopilot(t *testing.T, w *world) *copilotRun {
	repo := filepath.Join(w.home, "src", "copilot-demo")
	if err := os.MkdirAll(repo, 0o700); err != nil {
		t.Fatal(err)
	}
	w.seedRepo(t, repo)
	run := &copilotRun{main: newExpect(), subType: "explore", mainID: newUUID()}
	m := chatScript{run.main}
	abs := func(p string) string { return filepath.Join(repo, p) }
	sync := map[string]any{"mode": "sync"}
	scripts := map[string][]fc.Reply{}
	scripts["cmain"] = []fc.Reply{
		chatReply(0, chatText("plan"), m.call("view", "read", map[string]any{"path": abs("README.md")}, "README.md")),
		chatReply(1, m.shell("bash", "npm test", "verify", 1, sync)),
		chatReply(2, m.call("create", "edit", map[string]any{"path": abs("notes.txt"), "file_text": canary + "-notes ready\n"}, "notes.txt")),
		chatReply(3, m.shell("bash", "npm test", "verify", 0, sync)),
		chatReply(4, m.call("edit", "edit", map[string]any{"path": abs("src/app.js"),
			"old_str": "module.exports = { answer: 41 };", "new_str": "module.exports = { answer: 42 }; // " + canary}, "src/app.js")),
		chatReply(5, m.subagent(map[string]any{"description": canary + "-task", "name": canary + "-helper",
			"prompt": "[[script:csub]] " + canary + "-subagent prompt", "agent_type": run.subType})),
		chatReply(6, chatText("done")),
	}
	run.main.retries = 1
	sub := chatScript{newExpect()}
	scripts["csub"] = []fc.Reply{
		chatReply(0, sub.call("view", "read", map[string]any{"path": abs("lib/part01.txt")}, "lib/part01.txt")),
		chatReply(1, sub.shell("bash", "ls "+canary+"-missing", "exec", 2, sync)),
		chatReply(2, chatText("subagent done")),
	}
	run.main.merge(sub.e)
	scripts["cresume"] = []fc.Reply{
		chatReply(0, m.shell("bash", "git status --short", "exec", 0, sync)),
		chatReply(1, m.mcp("e2e-lookup", "lookup", false), m.mcp("e2e-broken", "broken", true)),
		chatReply(2, m.skill(map[string]any{"skill": skillName})),
		chatReply(3, chatText("resumed")),
	}
	run.main.userTurns = 2
	// The postToolUse hook fails after git status, the MCP lookup and the
	// skill; Copilot runs none after the failed MCP call.
	run.main.hookErrors = 3

	srv := fc.New(scripts)
	srv.SideReply = canary + "-side reply"
	run.srv = srv
	url := serve(t, "copilot", srv)
	writeSkillIn(t, filepath.Join(w.home, ".copilot", "skills"))
	env := []string{"COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false", "COPILOT_PROVIDER_BASE_URL=" + url + "/v1",
		"COPILOT_PROVIDER_API_KEY=sk-fake-chat", "COPILOT_MODEL=" + chatModel}
	mcp, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"e2e": map[string]any{"type": "local",
		"command": mcpCommand(t), "args": []string{}, "env": map[string]string{mcpEnv: "e2e"}, "tools": []string{"*"}}}})
	common := []string{"--allow-all-tools", "--no-auto-update", "--disable-client-telemetry", "--additional-mcp-config", string(mcp)}
	w.client(t, repo, "copilot-main", env, append([]string{"copilot", "--session-id", run.mainID, "-p",
		"[[script:cmain]] " + canary + "-prompt one"}, common...)...)
	// A user-level hook that fails after every successful tool call of
	// the resumed run.
	hooks, _ := json.Marshal(map[string]any{"hooks": map[string]any{"postToolUse": []any{map[string]any{
		"type": "command", "bash": "echo " + canary + "-hook >&2; exit 1"}}}})
	if err := os.WriteFile(filepath.Join(w.home, ".copilot", "settings.json"), hooks, 0o600); err != nil {
		t.Fatal(err)
	}
	w.client(t, repo, "copilot-resume", env, append([]string{"copilot", "--resume=" + run.mainID, "-p",
		"[[script:cresume]] " + canary + "-prompt two"}, common...)...)
	t.Logf("copilot: %d scripted requests, %d side requests; tools offered: %v", len(srv.Served()), srv.Unscripted(), srv.Offered())
	log := filepath.Join(w.home, ".copilot", "session-state", run.mainID, "events.jsonl")
	if own, all := copilotOwnTokens(t, log), sumServed(srv, "cmain", "cresume", "csub"); own != all.tokens {
		t.Errorf("copilot: the server reported %d tokens, the client's own session.shutdown model metrics %d", all.tokens, own)
	}
	return run
}

// copilotOwnTokens is Copilot CLI's own accounting of a session: the
// model metrics of its last session.shutdown (cumulative over resumes),
// input (cached tokens included) plus output.
func copilotOwnTokens(t *testing.T, log string) int64 {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("copilot: %v", err)
	}
	total, found := copilot.ClientTokens(bytes.Split(b, []byte("\n")))
	if !found {
		t.Errorf("copilot: %s has no session.shutdown: no accounting of the client's own to compare", log)
	}
	return total
}

func (r *copilotRun) sessions() []session {
	return []session{{name: "copilot main", native: r.mainID, tool: "copilot", model: chatModel, e: r.main,
		main: sumServed(r.srv, "cmain", "cresume"), lanes: []lane{{r.subType, sumServed(r.srv, "csub")}}}}
}
