package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	fa "github.com/agentmap/agentmap/e2e/fakeanthropic"
)

const claudeModel = "claude-sonnet-4-5"

// bigOutputCmd prints bigOutputBytes of scripted text: Claude Code keeps
// such an output in <session>/tool-results/ and only a preview inline, and
// the map must still count all of it.
const (
	bigOutputCmd   = "yes " + canary + "-big-output | head -n 60000"
	bigOutputBytes = 60000 * int64(len(canary+"-big-output\n"))
)

// Fixed session ids, so that the maps can be found by name.
const (
	claudeMainID = "0b6c7a52-5d2e-4f1a-9c3b-2f0e1d4c5a60"
	claudeLongID = "5e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b"
)

// cscript writes a Claude script and what it should leave in the map.
type cscript struct {
	w *world
	e *expect
}

func (c cscript) abs(rel string) string { return filepath.Join(c.w.repo, rel) }

func (c cscript) read(rel string) fa.Block {
	c.e.call("Read", "read", rel)
	return fa.Block{Tool: "Read", Input: map[string]any{"file_path": c.abs(rel)}}
}

func (c cscript) write(rel string, body string) fa.Block {
	c.e.call("Write", "edit", rel)
	return fa.Block{Tool: "Write", Input: map[string]any{"file_path": c.abs(rel), "content": body}}
}

func (c cscript) edit(rel, old, new string) fa.Block {
	c.e.call("Edit", "edit", rel)
	return fa.Block{Tool: "Edit", Input: map[string]any{"file_path": c.abs(rel), "old_string": old, "new_string": new}}
}

// bash runs command; kind is exec or verify; exit is the code the command
// is known to end with.
func (c cscript) bash(command, kind string, exit int) fa.Block {
	c.e.call("Bash", kind)
	if exit != 0 {
		c.e.exits = append(c.e.exits, exit)
	}
	return fa.Block{Tool: "Bash", Input: map[string]any{"command": command, "description": canary + " step"}}
}

func reply(step int, blocks ...fa.Block) fa.Reply {
	return fa.Reply{Blocks: blocks, Usage: fa.Usage{
		In: int64(3 + step), CacheWrite: int64(500 + 10*step), CacheRead: int64(4000 + 100*step), Out: int64(40 + step),
	}}
}

func text(s string) fa.Block { return fa.Block{Text: canary + "-" + s} }

type claudeRun struct {
	srv *fa.Server
	w   *world
	// side requests (compaction, titles, the client's own) answered while
	// each session ran: billed, so they are in the session's map
	mainSide, longSide int
	// What the main and the long session should show, and the scripts
	// of their main lanes.
	main, long               *expect
	mainScripts, longScripts []string
}

func runClaude(t *testing.T, w *world) *claudeRun {
	run := &claudeRun{w: w, main: newExpect(), long: newExpect(),
		mainScripts: []string{"cmain", "cresume"}, longScripts: []string{"clong"}}
	m := cscript{w, run.main}
	scripts := map[string][]fa.Reply{}

	// The main session: parallel reads and a failing test, a write and
	// edits, the test again (a retry that passes), a subagent, a failing
	// plain command; the model API overloaded once on the way.
	scripts["cmain"] = []fa.Reply{
		reply(0, fa.Block{Thinking: canary + "-thinking"}, text("plan"),
			m.read("README.md"), m.read("src/app.js"), m.bash("npm test -- --"+canary+"-flag", "verify", 1)),
		reply(1, m.write("notes.txt", canary+"-notes draft\n"), m.edit("src/app.js", "answer: 41", "answer: 42")),
		reply(2, m.edit("notes.txt", "draft", "ready")),
		reply(3, text("again"), m.bash("npm test", "verify", 0)),
		// Two subagents at once.
		reply(4, agentCall(m, "general-purpose", canary+"-subagent description", "[[script:csub]] "+canary+"-subagent prompt"),
			agentCall(m, "Explore", canary+"-explore description", "[[script:cexplore]] "+canary+"-explore prompt")),
		reply(5, m.bash("cat "+canary+"-missing.txt", "exec", 1), m.bash("git status --short", "exec", 0),
			m.bash(bigOutputCmd, "exec", 0)), // big enough to go to tool-results/
		reply(6, text("done")),
	}
	scripts["cmain"][1].FailFirst = 529
	// The subagent's own conversation (a lane of the main map).
	sub := cscript{w, newExpect()}
	scripts["csub"] = []fa.Reply{
		reply(0, sub.read("lib/part00.txt"), sub.bash("ls lib", "exec", 0)),
		reply(1, text("subagent done")),
	}
	run.main.merge(sub.e)
	explore := cscript{w, newExpect()}
	scripts["cexplore"] = []fa.Reply{
		reply(0, explore.read("lib/part03.txt"), explore.bash("ls src", "exec", 0)),
		reply(1, explore.read("src/app.js")),
		reply(2, text("explore done")),
	}
	run.main.merge(explore.e)
	// The second prompt, through --resume.
	writeSkill(t, w)
	scripts["cresume"] = []fa.Reply{
		reply(0, m.read("notes.txt"), m.bash("git diff --stat", "exec", 0), m.skill(skillName),
			m.mcp("lookup", false), m.mcp("broken", true)),
		reply(1, text("resumed")),
	}
	// Two prompts and /compact: a slash command that makes a model turn
	// counts as a prompt.
	run.main.userTurns = 3
	run.main.compactions = 1
	run.main.hookErrors = 1 // after the one Bash call of the resumed turn
	run.main.outBytes = map[string]int64{"yes": bigOutputBytes}
	run.main.retries = 1 // the test that failed passes on its second run

	// A long session: a few hundred tool calls, eight at a time.
	l := cscript{w, run.long}
	var long []fa.Reply
	for step := 0; step < 25; step++ {
		var blocks []fa.Block
		for i := 0; i < 8; i++ {
			n := (step*8 + i) % 12
			if i%4 == 3 {
				blocks = append(blocks, l.bash("test -f lib/part"+fmt.Sprintf("%02d", n)+".txt", "exec", 0))
			} else {
				blocks = append(blocks, l.read("lib/part"+fmt.Sprintf("%02d", n)+".txt"))
			}
		}
		long = append(long, reply(step, blocks...))
	}
	long = append(long, reply(25, text("long done")))
	scripts["clong"] = long
	run.long.userTurns = 1

	srv := fa.New(scripts)
	srv.SideReply = canary + "-summary" // becomes the compaction summary
	run.srv = srv
	url := serve(t, "anthropic", srv)
	env := []string{
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=sk-ant-fake-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"IS_SANDBOX=1",
	}
	mcpConfig, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"e2e": map[string]any{"type": "stdio", "command": mcpCommand(t), "env": map[string]string{mcpEnv: "e2e"}}}})
	common := []string{"--output-format", "stream-json", "--verbose", "--model", claudeModel, "--dangerously-skip-permissions",
		"--mcp-config", string(mcpConfig), "--strict-mcp-config"}
	w.client(t, w.repo, "claude-main", env, append([]string{"claude", "-p", "[[script:cmain]] " + canary + "-prompt one",
		"--session-id", claudeMainID}, common...)...)
	// A hook that fails after every Bash call of the resumed turn.
	hooks, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PostToolUse": []any{map[string]any{
		"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "echo " + canary + "-hook >&2; exit 1"}}}}}})
	w.client(t, w.repo, "claude-resume", env, append([]string{"claude", "-p", "[[script:cresume]] " + canary + "-prompt two",
		"--resume", claudeMainID, "--settings", string(hooks)}, common...)...)
	before := srv.Unscripted()
	w.client(t, w.repo, "claude-compact", env, append([]string{"claude", "-p", "/compact", "--resume", claudeMainID}, common...)...)
	if srv.Unscripted() == before {
		t.Errorf("/compact asked the model nothing")
	}
	run.mainSide = srv.Unscripted()
	// The long session asks for the 1M context: Claude Code's cost-state
	// then names the model claude-sonnet-4-5[1m] where the requests (and
	// the API's answers) say claude-sonnet-4-5; the map must count its
	// requests once, under one model.
	long1M := slices.Clone(common)
	long1M[slices.Index(long1M, claudeModel)] = claudeModel + "[1m]"
	w.client(t, w.repo, "claude-long", env, append([]string{"claude", "-p", "[[script:clong]] " + canary + "-prompt long",
		"--session-id", claudeLongID}, long1M...)...)
	run.longSide = srv.Unscripted() - run.mainSide
	t.Logf("claude: %d scripted requests, %d side requests; tools offered: %v", len(srv.Served()), srv.Unscripted(), srv.Offered())
	return run
}

// mcp calls a tool of the suite's MCP server "e2e".
func (c cscript) mcp(tool string, fail bool) fa.Block {
	c.e.call(tool, "mcp")
	c.e.servers["e2e"]++
	if fail {
		c.e.mcpErrors++
	}
	return fa.Block{Tool: "mcp__e2e__" + tool, Input: map[string]any{"key": canary + "-key"}}
}

// skillName is a user skill the suite installs.
const skillName = "e2e-check"

func writeSkill(t *testing.T, w *world) { writeSkillIn(t, filepath.Join(w.claude, "skills")) }

// writeSkillIn installs the suite's user skill in a client's skills
// directory: <dir>/<name>/SKILL.md, its description and body marked.
func writeSkillIn(t *testing.T, skills string) {
	dir := filepath.Join(skills, skillName)
	body := "---\nname: " + skillName + "\ndescription: " + canary + " skill description\n---\n\n" + canary + " skill body\n"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c cscript) skill(name string) fa.Block {
	c.e.calls["skill"]++ // a skill event names the skill, not the tool
	c.e.skills = append(c.e.skills, name)
	return fa.Block{Tool: "Skill", Input: map[string]any{"skill": name}}
}

func agentCall(c cscript, typ, desc, prompt string) fa.Block {
	c.e.calls["subagent"]++ // a subagent event names no tool
	return fa.Block{Tool: "Agent", Input: map[string]any{
		"description": desc, "prompt": prompt, "subagent_type": typ}}
}

// sessions are the Claude Code sessions with what the server answered.
func (r *claudeRun) sessions() []session {
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
	withSide := func(s served, n int) served {
		s.requests += n
		s.tokens += int64(n) * fa.SideUsage.Total()
		return s
	}
	return []session{
		{name: "claude main", native: claudeMainID, tool: "claude-code", model: claudeModel, e: r.main,
			main:      withSide(sum(r.mainScripts...), r.mainSide),
			lanes:     []lane{{"general-purpose", sum("csub")}, {"Explore", sum("cexplore")}},
			llmErrors: map[string]int{"overloaded": 1}, client: costState(r.w, claudeMainID), side: r.mainSide},
		{name: "claude long", native: claudeLongID, tool: "claude-code", model: claudeModel, e: r.long,
			main: withSide(sum(r.longScripts...), r.longSide), client: costState(r.w, claudeLongID), side: r.longSide},
	}
}

// costState reads Claude Code's own account of a session from its
// transcript: the last cost-state line of each process (startTime), summed.
// nil when the transcript has none.
func costState(w *world, native string) *clientTotal {
	paths, _ := filepath.Glob(filepath.Join(w.claude, "projects", "*", native+".jsonl"))
	if len(paths) != 1 {
		return nil
	}
	f, err := os.Open(paths[0])
	if err != nil {
		return nil
	}
	defer f.Close()
	type state struct {
		Type       string  `json:"type"`
		StartTime  int64   `json:"startTime"`
		Total      float64 `json:"totalCostUSD"`
		ModelUsage map[string]struct {
			In  int64 `json:"inputTokens"`
			Out int64 `json:"outputTokens"`
			CR  int64 `json:"cacheReadInputTokens"`
			CW  int64 `json:"cacheCreationInputTokens"`
		} `json:"modelUsage"`
	}
	last := map[int64]state{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var s state
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Type == "cost-state" {
			last[s.StartTime] = s
		}
	}
	if len(last) == 0 {
		return nil
	}
	c := &clientTotal{}
	for _, s := range last {
		c.usd += s.Total
		for _, u := range s.ModelUsage {
			c.tokens += u.In + u.Out + u.CR + u.CW
		}
	}
	return c
}
