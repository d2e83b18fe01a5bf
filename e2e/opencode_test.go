package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	fc "github.com/agentmap/agentmap/e2e/fakechat"
	"github.com/agentmap/agentmap/watchers/opencode"
)

// chatModel is the model name the Chat Completions clients are configured
// with; the fake server answers for any.
const chatModel = "fake-chat-model"

// chatScript writes a Chat Completions script (OpenCode, Copilot CLI) and what
// it should leave in the map.
type chatScript struct{ e *expect }

// call is a tool call the map shows as kind, touching files.
func (c chatScript) call(tool, kind string, args map[string]any, files ...string) fc.Item {
	c.e.call(tool, kind, files...)
	return fc.Item{Function: tool, Args: args}
}

// shell runs a command with the client's shell tool; a non-zero exit is
// expected as a failed call with its exit code.
func (c chatScript) shell(tool, cmd, kind string, exit int, extra map[string]any) fc.Item {
	if exit != 0 {
		c.e.exits = append(c.e.exits, exit)
	}
	args := map[string]any{"command": cmd, "description": canary + "-description"}
	for k, v := range extra {
		args[k] = v
	}
	return c.call(tool, kind, args)
}

// mcp calls a tool of the suite's MCP server "e2e" by the name the client
// offers it under (OpenCode: e2e_lookup; Copilot CLI: e2e-lookup).
func (c chatScript) mcp(name, tool string, fail bool) fc.Item {
	c.e.call(tool, "mcp")
	c.e.servers["e2e"]++
	if fail {
		c.e.mcpErrors++
	}
	return fc.Item{Function: name, Args: map[string]any{"key": canary + "-key"}}
}

// skill calls the client's skill tool with args naming the suite's user
// skill (writeSkill); a skill event names the skill, not the tool.
func (c chatScript) skill(args map[string]any) fc.Item {
	c.e.calls["skill"]++
	c.e.skills = append(c.e.skills, skillName)
	return fc.Item{Function: "skill", Args: args}
}

// subagent starts a subagent (its tool name is not counted: the map names
// a subagent call by its type).
func (c chatScript) subagent(args map[string]any) fc.Item {
	c.e.calls["subagent"]++
	return fc.Item{Function: "task", Args: args}
}

func chatReply(step int, items ...fc.Item) fc.Reply {
	return fc.Reply{Items: items, Usage: fc.Usage{Prompt: int64(2000 + 100*step), Cached: int64(1500 + 100*step), Completion: int64(40 + step)}}
}

func chatText(s string) fc.Item { return fc.Item{Text: canary + "-" + s} }

// sumServed sums what a Chat Completions server answered for scripts.
func sumServed(srv *fc.Server, scripts ...string) served {
	var s served
	for _, x := range srv.Served() {
		if slices.Contains(scripts, x.Script) {
			s.requests++
			s.tokens += x.Usage.Total()
		}
	}
	return s
}

type openCodeRun struct {
	srv     *fc.Server
	mainID  string
	main    *expect
	subType string
}

// writeOpenCodeConfig points OpenCode at the fake server as a custom
// OpenAI-compatible provider, lets every tool run, and turns off what
// would reach the network (model list, updates, sharing, default plugins).
func writeOpenCodeConfig(t *testing.T, w *world, url string) string {
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "fake",
			"options": map[string]any{"baseURL": url + "/v1", "apiKey": "sk-fake-chat"},
			"models":  map[string]any{chatModel: map[string]any{"name": chatModel}},
		}},
		"model": "fake/" + chatModel, "small_model": "fake/" + chatModel,
		"autoupdate": false, "share": "disabled",
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
		"mcp": map[string]any{"e2e": map[string]any{"type": "local", "command": []string{mcpCommand(t)},
			"environment": map[string]string{mcpEnv: "e2e"}, "enabled": true}},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	p := filepath.Join(w.home, ".config", "opencode", "opencode.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runOpenCode(t *testing.T, w *world) *openCodeRun {
	repo := filepath.Join(w.home, "src", "opencode-demo")
	if err := os.MkdirAll(repo, 0o700); err != nil {
		t.Fatal(err)
	}
	w.seedRepo(t, repo)
	run := &openCodeRun{main: newExpect(), subType: "explore"}
	m := chatScript{run.main}
	abs := func(p string) string { return filepath.Join(repo, p) }
	scripts := map[string][]fc.Reply{}
	scripts["omain"] = []fc.Reply{
		chatReply(0, chatText("plan"), m.call("read", "read", map[string]any{"filePath": abs("README.md")}, "README.md")),
		chatReply(1, m.shell("bash", "npm test", "verify", 1, nil)),
		chatReply(2, m.call("write", "edit", map[string]any{"filePath": abs("notes.txt"), "content": canary + "-notes ready\n"}, "notes.txt")),
		chatReply(3, m.shell("bash", "npm test", "verify", 0, nil)),
		chatReply(4, m.call("edit", "edit", map[string]any{"filePath": abs("src/app.js"),
			"oldString": "module.exports = { answer: 41 };", "newString": "module.exports = { answer: 42 }; // " + canary}, "src/app.js")),
		chatReply(5, m.subagent(map[string]any{"description": canary + "-task", "prompt": "[[script:osub]] " + canary + "-subagent prompt",
			"subagent_type": run.subType})),
		chatReply(6, chatText("done")),
	}
	run.main.retries = 1 // the test that failed passes on its second run
	sub := chatScript{newExpect()}
	scripts["osub"] = []fc.Reply{
		chatReply(0, sub.call("read", "read", map[string]any{"filePath": abs("lib/part01.txt")}, "lib/part01.txt")),
		chatReply(1, sub.shell("bash", "ls "+canary+"-missing", "exec", 2, nil)),
		chatReply(2, chatText("subagent done")),
	}
	run.main.merge(sub.e)
	// A second prompt continues the same session.
	scripts["oresume"] = []fc.Reply{
		chatReply(0, m.shell("bash", "git status --short", "exec", 0, nil)),
		chatReply(1, m.mcp("e2e_lookup", "lookup", false), m.mcp("e2e_broken", "broken", true)),
		chatReply(2, m.skill(map[string]any{"name": skillName})),
		chatReply(3, chatText("resumed")),
	}
	run.main.userTurns = 2

	srv := fc.New(scripts)
	srv.SideReply = canary + "-title"
	run.srv = srv
	url := serve(t, "opencode", srv)
	cfg := writeOpenCodeConfig(t, w, url)
	writeSkillIn(t, filepath.Join(w.home, ".config", "opencode", "skills"))
	env := []string{"OPENCODE_CONFIG=" + cfg, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1"}
	out := w.client(t, repo, "opencode-main", env, "opencode", "run", "--format", "json", "[[script:omain]] "+canary+"-prompt one")
	run.mainID = openCodeSession(t, out)
	w.client(t, repo, "opencode-resume", env, "opencode", "run", "--format", "json", "--session", run.mainID,
		"[[script:oresume]] "+canary+"-prompt two")
	t.Logf("opencode: %d scripted requests, %d side requests; tools offered: %v", len(srv.Served()), srv.Unscripted(), srv.Offered())
	// OpenCode's own accounting: the token totals of its session rows (the
	// root and the subagent's child session).
	own, err := opencode.SessionTokens(t.Context(), filepath.Join(w.home, ".local", "share", "opencode", "opencode.db"))
	if err != nil {
		t.Fatalf("opencode: its session rows: %v", err)
	}
	var sum int64
	for _, n := range own {
		sum += n
	}
	if all := sumServed(srv, "omain", "oresume", "osub"); len(own) != 2 || sum != all.tokens {
		t.Errorf("opencode: the server reported %d tokens, the client's own session rows %d (%d sessions, want 2)", all.tokens, sum, len(own))
	}
	return run
}

// openCodeSession reads the session id from `opencode run --format json`.
func openCodeSession(t *testing.T, out []byte) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			SessionID string `json:"sessionID"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.SessionID != "" {
			return ev.SessionID
		}
	}
	t.Fatalf("opencode run --format json printed no session id")
	return ""
}

func (r *openCodeRun) sessions() []session {
	return []session{{name: "opencode main", native: r.mainID, tool: "opencode", model: chatModel, e: r.main,
		main: sumServed(r.srv, "omain", "oresume"), lanes: []lane{{r.subType, sumServed(r.srv, "osub")}}}}
}
