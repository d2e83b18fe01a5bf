package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	fo "github.com/agentmap/agentmap/e2e/fakeopenai"
)

// codexModel is a model Codex has metadata for: unknown names get a
// reduced tool set without apply_patch.
const codexModel = "gpt-5.5"

// codexAgentModel is a model Codex has no metadata for: it is offered the
// multi_agent_v1 tools (spawn_agent, wait_agent).
const codexAgentModel = "gpt-5-codex"

// xscript writes a Codex script and what it should leave in the map.
type xscript struct{ e *expect }

func (x xscript) exec(cmd, kind string, exit int) fo.Item {
	x.e.call("exec_command", kind)
	if exit != 0 {
		x.e.exits = append(x.e.exits, exit)
	}
	return fo.Item{Function: "exec_command", Args: map[string]any{"cmd": cmd, "yield_time_ms": 10000}}
}

// read runs a command that reads a file, as Codex's parsed_cmd names it:
// the file is in files[] with the read counted.
func (x xscript) read(cmd string, exit int, file string) fo.Item {
	x.e.shellTouch(file, 1)
	return x.exec(cmd, "exec", exit)
}

// look runs a command that lists or searches a directory: a hit.
func (x xscript) look(cmd string, exit int, dir string) fo.Item {
	x.e.shellTouch(dir, 0)
	return x.exec(cmd, "exec", exit)
}

func (x xscript) plan(status ...string) fo.Item {
	x.e.call("update_plan", "tool")
	var steps []any
	for i, s := range status {
		steps = append(steps, map[string]any{"step": fmt.Sprintf("%s-step %d", canary, i), "status": s})
	}
	return fo.Item{Function: "update_plan", Args: map[string]any{"explanation": canary + "-plan", "plan": steps}}
}

// patch applies a patch that creates, modifies and deletes files.
func (x xscript) patch(body string, files ...string) fo.Item {
	x.e.call("apply_patch", "edit", files...)
	return fo.Item{Custom: "apply_patch", Input: body}
}

// mcp calls a tool of the suite's MCP server "e2e".
func (x xscript) mcp(tool string, fail bool) fo.Item {
	x.e.call(tool, "mcp")
	x.e.servers["e2e"]++
	if fail {
		x.e.mcpErrors++
	}
	return fo.Item{Function: tool, Namespace: "mcp__e2e", Args: map[string]any{"key": canary + "-key"}}
}

// spawn starts a subagent with a prompt.
func (x xscript) spawn(prompt string) fo.Item {
	x.e.calls["subagent"]++
	return fo.Item{Function: "spawn_agent", Namespace: "multi_agent_v1", Args: map[string]any{"message": prompt}}
}

// wait waits for the agent that the call spawnCall started, and keeps
// its id (the thread id of its rollout) in child.
func (x xscript) wait(spawnCall string, child *string) fo.Item {
	x.e.call("wait_agent", "tool")
	return fo.Item{Function: "wait_agent", Namespace: "multi_agent_v1", ArgsFrom: func(out map[string]string) map[string]any {
		var r struct {
			AgentID string `json:"agent_id"`
			ID      string `json:"id"`
		}
		json.Unmarshal([]byte(out[spawnCall]), &r)
		id := r.AgentID
		if id == "" {
			id = r.ID
		}
		*child = id
		return map[string]any{"targets": []string{id}, "timeout_ms": 60000}
	}}
}

func xreply(step int, items ...fo.Item) fo.Reply {
	return fo.Reply{Items: items, Usage: fo.Usage{
		Input: int64(3000 + 100*step), Cached: int64(2000 + 100*step), Output: int64(60 + step), Reasoning: int64(step),
	}}
}

func xtext(s string) fo.Item { return fo.Item{Text: canary + "-" + s} }

type codexRun struct {
	srv                      *fo.Server
	mainID, longID, agentID  string
	childID                  string // the spawned agent's thread
	main, long, agent, sub   *expect
	mainScripts, longScripts []string
}

func writeCodexConfig(t *testing.T, w *world, url string) {
	cfg := `model = "` + codexModel + `"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "` + url + `/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 1

[tools.update_plan]
enabled = true

[analytics]
enabled = false

[mcp_servers.e2e]
command = "` + mcpCommand(t) + `"
env = { ` + mcpEnv + ` = "e2e" }
`
	if err := os.WriteFile(filepath.Join(w.codex, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runCodex(t *testing.T, w *world) *codexRun {
	run := &codexRun{main: newExpect(), long: newExpect(), agent: newExpect(),
		mainScripts: []string{"xmain", "xresume"}, longScripts: []string{"xlong"}}
	m := xscript{run.main}
	scripts := map[string][]fo.Reply{}
	scripts["xmain"] = []fo.Reply{
		xreply(0, fo.Item{Reasoning: canary + "-reasoning"}, xtext("plan"),
			m.exec("npm test -- --"+canary+"-flag", "verify", 1), m.read("cat README.md", 0, "README.md")),
		xreply(1, m.plan("in_progress", "pending")),
		xreply(2, m.patch("*** Begin Patch\n*** Add File: notes.txt\n+"+canary+"-notes ready\n"+
			"*** Update File: src/app.js\n@@\n-module.exports = { answer: 41 };\n+module.exports = { answer: 42 };\n"+
			"*** Delete File: lib/part11.txt\n*** End Patch\n", "notes.txt", "src/app.js", "lib/part11.txt")),
		xreply(3, xtext("again"), m.exec("npm test", "verify", 0)),
		// A path a command names is map content (a target), so the
		// canary stays out of path names; it is in the flags.
		xreply(4, m.look("ls missing-dir", 2, "missing-dir"), m.exec("git status --short", "exec", 0)),
		// A failed read, then the same verb on other files: no retry.
		xreply(5, m.read("cat absent.txt", 1, "absent.txt"), m.look("rg -n answer src", 0, "src")),
		xreply(6, m.read("cat README.md", 0, "README.md"), m.read("sed -n 1,3p src/app.js", 0, "src/app.js")),
		xreply(7, xtext("done")),
	}
	// The model API fails once; Codex retries without a trace in the
	// rollout, and the retried request must not count twice.
	scripts["xmain"][2].FailFirst = 500
	scripts["xresume"] = []fo.Reply{
		xreply(0, m.exec("git diff --stat", "exec", 0), m.plan("completed", "completed")),
		xreply(1, xtext("resumed")),
	}
	run.main.userTurns = 2
	run.main.retries = 1 // the test that failed passes on its second run

	l := xscript{run.long}
	var long []fo.Reply
	for step := 0; step < 25; step++ {
		var items []fo.Item
		for i := 0; i < 8; i++ {
			part := fmt.Sprintf("lib/part%02d.txt", (step*8+i)%11)
			if i%2 == 0 {
				items = append(items, l.exec("test -f "+part, "exec", 0))
			} else {
				items = append(items, l.read("cat "+part, 0, part))
			}
		}
		long = append(long, xreply(step, items...))
	}
	long = append(long, xreply(25, xtext("long done")))
	scripts["xlong"] = long
	run.long.userTurns = 1

	// A spawned agent: Codex offers spawn_agent only to models it has no
	// metadata for, so this session runs on such a model.
	a := xscript{run.agent}
	scripts["xagent"] = []fo.Reply{
		xreply(0, a.spawn("[[script:xsub]] "+canary+"-subagent prompt")),
		xreply(1, a.wait(fo.CallID("xagent", 0, 0), &run.childID)),
		// MCP tools come as the namespace mcp__e2e.
		xreply(2, a.mcp("lookup", false), a.mcp("broken", true)),
		xreply(3, xtext("agent done")),
	}
	sub := xscript{newExpect()}
	scripts["xsub"] = []fo.Reply{
		xreply(0, sub.look("ls lib", 0, "lib"), sub.read("cat absent-note.txt", 1, "absent-note.txt")),
		xreply(1, xtext("subagent done")),
	}
	run.agent.merge(sub.e)
	run.agent.userTurns = 1
	run.sub = sub.e // its prompt is the parent's instruction, not a user turn

	srv := fo.New(scripts)
	srv.SideReply = canary + "-side reply"
	run.srv = srv
	url := serve(t, "openai", srv)
	writeCodexConfig(t, w, url)
	env := []string{"FAKE_OPENAI_API_KEY=sk-fake-openai", "RUST_LOG=warn"}
	common := []string{"--json", "--skip-git-repo-check"}
	out := w.client(t, w.xrepo, "codex-main", env, append([]string{"codex", "exec"}, append(common, "[[script:xmain]] "+canary+"-prompt one")...)...)
	run.mainID = threadID(t, out)
	w.client(t, w.xrepo, "codex-resume", env, append([]string{"codex", "exec", "resume"}, append(common, run.mainID, "[[script:xresume]] "+canary+"-prompt two")...)...)
	out = w.client(t, w.xrepo, "codex-long", env, append([]string{"codex", "exec"}, append(common, "[[script:xlong]] "+canary+"-prompt long")...)...)
	run.longID = threadID(t, out)
	out = w.client(t, w.xrepo, "codex-agent", env, append([]string{"codex", "exec", "-m", codexAgentModel},
		append(common, "[[script:xagent]] "+canary+"-prompt agent")...)...)
	run.agentID = threadID(t, out)
	t.Logf("codex: %d scripted requests, %d side requests; tools offered: %v", len(srv.Served()), srv.Unscripted(), srv.Offered())
	return run
}

// threadID reads the thread id from `codex exec --json` output.
func threadID(t *testing.T, out []byte) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.ThreadID != "" {
			return ev.ThreadID
		}
	}
	t.Fatalf("codex exec --json printed no thread id")
	return ""
}

// sessions are the Codex sessions with what the server answered.
func (r *codexRun) sessions() []session {
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
	return []session{
		{name: "codex main", native: r.mainID, tool: "codex", model: codexModel, e: r.main, main: sum(r.mainScripts...)},
		{name: "codex long", native: r.longID, tool: "codex", model: codexModel, e: r.long, main: sum(r.longScripts...)},
		{name: "codex spawning", native: r.agentID, tool: "codex", model: codexAgentModel, e: r.agent,
			main: sum("xagent"), lanes: []lane{{"", sum("xsub")}}},
		// The spawned agent's rollout is also a map of its own.
		{name: "codex spawned", native: r.childID, tool: "codex", model: codexAgentModel, e: r.sub,
			main: sum("xsub"), role: "subagent", parent: "local:codex:" + r.agentID},
	}
}
