package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	fg "github.com/agentmap/agentmap/e2e/fakegemini"
)

// geminiModel is the model the Gemini CLI is told to use (-m), so that no
// routing request picks one.
const geminiModel = "gemini-2.5-pro"

// gscript writes a Gemini CLI script and what it should leave in the map.
type gscript struct{ e *expect }

func (g gscript) shell(cmd, kind string, exit int) fg.Part {
	g.e.call("run_shell_command", kind)
	if exit != 0 {
		g.e.exits = append(g.e.exits, exit)
	}
	return fg.Part{Function: "run_shell_command", Args: map[string]any{"command": cmd, "description": canary + "-description"}}
}

func (g gscript) read(file string) fg.Part {
	g.e.call("read_file", "read", file)
	return fg.Part{Function: "read_file", Args: map[string]any{"file_path": file}}
}

func (g gscript) write(file, content string) fg.Part {
	g.e.call("write_file", "edit", file)
	return fg.Part{Function: "write_file", Args: map[string]any{"file_path": file, "content": content}}
}

func (g gscript) replace(file, old, new string) fg.Part {
	g.e.call("replace", "edit", file)
	return fg.Part{Function: "replace", Args: map[string]any{"file_path": file, "old_string": old, "new_string": new,
		"instruction": canary + "-instruction"}}
}

// mcp calls a tool of the suite's MCP server "e2e" (mcp_<server>_<tool>).
func (g gscript) mcp(tool string, fail bool) fg.Part {
	g.e.call(tool, "mcp")
	g.e.servers["e2e"]++
	if fail {
		g.e.mcpErrors++
	}
	return fg.Part{Function: "mcp_e2e_" + tool, Args: map[string]any{"key": canary + "-key"}}
}

// skill activates the suite's user skill (writeSkillIn); a skill event
// names the skill, not the tool.
func (g gscript) skill(name string) fg.Part {
	g.e.calls["skill"]++
	g.e.skills = append(g.e.skills, name)
	return fg.Part{Function: "activate_skill", Args: map[string]any{"name": name}}
}

// done ends a subagent: complete_task with the generalist's output.
func (g gscript) done() fg.Part {
	g.e.call("complete_task", "tool")
	return fg.Part{Function: "complete_task", Args: map[string]any{"result": map[string]any{"response": canary + "-found"}}}
}

func greply(step int, parts ...fg.Part) fg.Reply {
	return fg.Reply{Parts: parts, Usage: fg.Usage{
		Input: int64(4000 + 100*step), Cached: int64(2500 + 100*step), Output: int64(70 + step), Thoughts: int64(3 * step),
	}}
}

func gtext(s string) fg.Part { return fg.Part{Text: canary + "-" + s} }

type geminiRun struct {
	srv             *fg.Server
	mainID, agentID string
	main, agent     *expect
	// own is the client's own token accounting (the stats of -o json),
	// summed over the runs of the session.
	own int64
}

func writeGeminiSettings(t *testing.T, w *world) {
	dir := filepath.Join(w.home, ".gemini")
	settings := map[string]any{
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"security": map[string]any{"folderTrust": map[string]any{"enabled": false},
			"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"mcpServers": map[string]any{"e2e": map[string]any{
			"command": mcpCommand(t), "env": map[string]any{mcpEnv: "e2e"}, "trust": true}},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func runGemini(t *testing.T, w *world) *geminiRun {
	run := &geminiRun{main: newExpect(), agent: newExpect()}
	repo := filepath.Join(w.home, "src", "gemini-demo")
	w.seedRepo(t, repo)
	m := gscript{run.main}
	scripts := map[string][]fg.Reply{}
	scripts["gmain"] = []fg.Reply{
		greply(0, fg.Part{Thought: canary + "-thinking"}, gtext("plan"),
			m.read("README.md"), m.shell("npm test -- --"+canary+"-flag", "verify", 1)),
		greply(1, m.write("notes.txt", canary+"-notes ready\n"),
			m.replace("src/app.js", "answer: 41", "answer: 42")),
		greply(2, gtext("again"), m.shell("npm test", "verify", 0), m.mcp("lookup", false), m.mcp("broken", true)),
		greply(3, gtext("done")),
	}
	// The model API fails once; the client retries, and the retried
	// request must not count twice.
	scripts["gmain"][1].FailFirst = 500
	scripts["gresume"] = []fg.Reply{
		greply(0, m.shell("ls "+canary+"-missing", "exec", 2), m.shell("git status --short", "exec", 0)),
		greply(1, m.skill(skillName)),
		greply(2, gtext("resumed")),
	}
	run.main.userTurns = 2
	run.main.retries = 1 // the test that failed passes on its second run

	// A subagent: invoke_agent starts the built-in generalist, whose chat
	// is a file of its own under chats/<session id>/; it ends by calling
	// complete_task with its result.
	run.agent.calls["subagent"]++
	scripts["gagent"] = []fg.Reply{
		greply(0, fg.Part{Function: "invoke_agent", Args: map[string]any{"agent_name": "generalist",
			"prompt": "[[script:gsub]] " + canary + "-subagent task"}}),
		greply(1, gtext("agent done")),
	}
	sub := gscript{newExpect()}
	scripts["gsub"] = []fg.Reply{
		greply(0, sub.shell("ls lib", "exec", 0), sub.shell("cat "+canary+"-absent", "exec", 1)),
		greply(1, sub.done()),
	}
	run.agent.merge(sub.e)
	run.agent.userTurns = 1

	srv := fg.New(scripts)
	srv.SideReply = canary + "-side reply"
	run.srv = srv
	url := serve(t, "gemini", srv)
	writeGeminiSettings(t, w)
	writeSkillIn(t, filepath.Join(w.home, ".gemini", "skills"))
	env := []string{"GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_CLI_NO_RELAUNCH=true"}
	common := []string{"-m", geminiModel, "--yolo", "-o", "json"}
	out := w.client(t, repo, "gemini-main", env, append([]string{"gemini"}, append(common, "-p", "[[script:gmain]] "+canary+"-prompt one")...)...)
	run.mainID = run.account(t, out)
	out = w.client(t, repo, "gemini-resume", env, append([]string{"gemini", "--resume", "latest"}, append(common, "-p", "[[script:gresume]] "+canary+"-prompt two")...)...)
	if id := run.account(t, out); id != run.mainID {
		t.Errorf("gemini --resume latest ran session %s, not %s", id, run.mainID)
	}
	out = w.client(t, repo, "gemini-agent", env, append([]string{"gemini"}, append(common, "-p", "[[script:gagent]] "+canary+"-prompt agent")...)...)
	run.agentID = run.account(t, out)
	t.Logf("gemini: %d scripted requests, %d side requests; tools offered: %v", len(srv.Served()), srv.Unscripted(), srv.Offered())
	return run
}

// account reads the session id and adds the client's own token totals
// from `gemini -o json` output.
func (r *geminiRun) account(t *testing.T, out []byte) string {
	t.Helper()
	var res struct {
		SessionID string `json:"session_id"`
		Stats     struct {
			Models map[string]struct {
				Tokens struct {
					Total int64 `json:"total"`
				} `json:"tokens"`
			} `json:"models"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.SessionID == "" {
		t.Fatalf("gemini -o json printed no session id (%v)", err)
	}
	for _, m := range res.Stats.Models {
		r.own += m.Tokens.Total
	}
	return res.SessionID
}

// sessions are the Gemini CLI sessions with what the server answered.
func (r *geminiRun) sessions(t *testing.T) []session {
	sum := func(scripts ...string) served {
		var s served
		for _, x := range r.srv.Served() {
			if slices.Contains(scripts, x.Script) {
				s.requests++
				s.tokens += x.Usage.Total()
			}
		}
		return s
	}
	if all := sum("gmain", "gresume", "gagent", "gsub"); all.tokens != r.own {
		t.Errorf("gemini: the server reported %d tokens, the client's own stats %d", all.tokens, r.own)
	}
	return []session{
		{name: "gemini main", native: r.mainID, tool: "gemini-cli", model: geminiModel, e: r.main,
			main: sum("gmain", "gresume"), llmErrors: map[string]int{}},
		{name: "gemini subagent", native: r.agentID, tool: "gemini-cli", model: geminiModel, e: r.agent,
			main: sum("gagent"), lanes: []lane{{"generalist", sum("gsub")}}},
	}
}
