package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/report"
	"github.com/agentmap/agentmap/watchers/agents"
)

// costHome is a home of its own for the cost tests: HOME and the agents'
// variables point into a temporary directory, and a config file names the
// data directory and the root of the one agent a test writes logs for.
type costHome struct {
	t          *testing.T
	cfg, data  string
	root       string // the agent's root: ~/.claude or ~/.codex
	agent, doc string
}

func newCostHome(t *testing.T, agent string) *costHome {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", config.EnvConfig} {
		t.Setenv(v, "")
	}
	h := &costHome{t: t, cfg: filepath.Join(home, "agentmap.toml"), data: filepath.Join(home, "data"),
		root: filepath.Join(home, "."+agent), agent: agent}
	h.configure("")
	return h
}

// configure writes the config file, with extra (a [prices] entry) after
// the agents.
func (h *costHome) configure(extra string) {
	body := fmt.Sprintf("version = 1\ndata_dir = %q\n", filepath.ToSlash(h.data))
	for _, a := range config.AgentNames {
		if a == h.agent {
			body += fmt.Sprintf("[agents.%s]\nroots = [%q]\n", a, filepath.ToSlash(h.root))
		} else {
			body += "[agents." + a + "]\nenabled = false\n"
		}
	}
	if err := os.WriteFile(h.cfg, []byte(body+extra), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *costHome) write(rel string, lines ...string) {
	h.t.Helper()
	appendFile(h.t, filepath.Join(h.root, filepath.FromSlash(rel)), strings.Join(lines, "\n")+"\n")
}

// must runs a command with the config and fails the test unless it exits 0.
// show is show --json of the session id names, decoded.
func (h *costHome) show(id string) summary {
	h.t.Helper()
	out, _ := h.must("show", id, "--json")
	var sum summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		h.t.Fatal(err)
	}
	return sum
}

func (h *costHome) must(args ...string) (string, string) {
	h.t.Helper()
	code, out, errOut := run(h.t, append(args, "--config", h.cfg)...)
	if code != exitOK {
		h.t.Fatalf("agentmap %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

// claudeRequest is one prompt and one answer of model in Claude Code's log
// shape, with the usage given (a JSON object) and speed "fast" or "standard".
func claudeRequest(session string, n int, model, usage string) []string {
	ts := func(s int) string { return fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", n, s) }
	common := fmt.Sprintf(`"cwd":"/w/syn","sessionId":%q,"version":"2.1.100","userType":"external","isSidechain":false`, session)
	return []string{
		fmt.Sprintf(`{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u%d","timestamp":%q,%s}`, n, ts(1), common),
		fmt.Sprintf(`{"parentUuid":"u%d","type":"assistant","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":%s},"uuid":"a%d","timestamp":%q,%s}`,
			n, n, n, model, usage, n, ts(3), common),
	}
}

// A price set in the config after the maps were written reprices them
// with flush --all --rewrite, and a map with flush ID, without a daemon:
// before, what shows the unpriced cost says so rather than that no price
// is known.
func TestFlushWithoutADaemonRepricesTheMaps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("flush without a daemon asks one of its own process over the control socket, unix-only")
	}
	h := newCostHome(t, "claude")
	const sid = "9c6ccffc-9c26-56bb-94b7-9dce5a3436f7"
	usage := `{"input_tokens":1000,"cache_read_input_tokens":10000,"cache_creation_input_tokens":0,"output_tokens":100}`
	h.write("projects/-w-syn/"+sid+".jsonl", claudeRequest(sid, 1, "claude-zeta-1", usage)...)
	h.must("scan")
	if out, _ := h.must("list"); !strings.Contains(out, "unpriced") || strings.Contains(out, "priced in the config") {
		t.Fatalf("list before a price is set:\n%s", out)
	}

	h.configure("[prices.\"claude-zeta\"]\ninput = 2.0\ncache_write = 2.5\ncache_read = 0.2\noutput = 10.0\n")
	out, _ := h.must("show", sid[:8])
	if !strings.Contains(out, "claude-zeta-1 is priced in the config since this map was written: agentmap flush "+sid+" reprices it") {
		t.Errorf("show of a map unpriced before the config priced its model:\n%s", out)
	}
	if out, _ := h.must("list"); !strings.Contains(out, "claude-zeta-1 is priced in the config since the maps that leave it out were written: the service reprices them once it has read the config, and so does the next agentmap scan") {
		t.Errorf("list of a map unpriced before the config priced its model:\n%s", out)
	}

	out, errOut := h.must("flush", "--all", "--rewrite")
	// The command's own daemon may have written the map with the new
	// price as it caught up (the maps' options changed) before the
	// rewrite asked for: then it is up to date already.
	if !strings.Contains(out, "written again: 1 map") && !strings.Contains(out, "up to date already: 1") || !strings.Contains(errOut, "no daemon is running") {
		t.Errorf("flush --all --rewrite without a daemon:\n%s%s", out, errOut)
	}
	sum := h.show(sid[:8])
	// 1,000 input at $2, 10,000 cache reads at $0.20, 100 output at $10.
	if len(sum.Unpriced) != 0 || sum.Totals.CostUSD != 0.005 {
		t.Errorf("after flush --all --rewrite: unpriced %q, cost $%v", sum.Unpriced, sum.Totals.CostUSD)
	}
	if out, _ := h.must("usage"); strings.Contains(out, "unpriced") || !strings.Contains(out, "$0.01") {
		t.Errorf("usage after flush --all --rewrite:\n%s", out)
	}

	// flush ID, without a daemon, writes that map with the prices in effect.
	h.configure("[prices.\"claude-zeta\"]\ninput = 20.0\ncache_write = 25\ncache_read = 2\noutput = 100.0\n")
	if out, _ := h.must("flush", sid[:8]); !strings.Contains(out, "flushed claude/"+sid) {
		t.Errorf("flush ID without a daemon:\n%s", out)
	}
	sum = h.show(sid[:8])
	if sum.Totals.CostUSD != 0.05 {
		t.Errorf("after flush ID: cost $%v, want $0.05", sum.Totals.CostUSD)
	}
	// The process's daemon is gone: nothing answers on the socket.
	if _, err := os.Stat(filepath.Join(h.data, "agentmap.sock")); err == nil {
		t.Error("the control socket of flush's own daemon is left behind")
	}
	if code, _, errOut := run(t, "flush", "nonexistent", "--config", h.cfg); code != exitFailure ||
		!strings.Contains(errOut, "agentmap flush: nonexistent: no session in the store matches that id") {
		t.Errorf("flush of an unknown id without a daemon: exit %d\n%s", code, errOut)
	}
}

// A Claude session served in fast mode is billed at a multiple of the list
// price: show says so by the model, usage model shows it apart.
func TestFastModeIsShown(t *testing.T) {
	h := newCostHome(t, "claude")
	const sid = "2dc953ec-3fb6-51b4-8aa6-654b395c6df6"
	fast := `{"input_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1000,"speed":"fast"}`
	std := `{"input_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1000,"speed":"standard"}`
	h.write("projects/-w-syn/"+sid+".jsonl", append(claudeRequest(sid, 1, "claude-opus-4-8", fast), claudeRequest(sid, 2, "claude-opus-4-8", std)...)...)
	h.must("scan")
	out, _ := h.must("show", sid[:8])
	if !strings.Contains(out, "models    claude-opus-4-8 (fast mode: 1 of 2 requests, priced 2x)") {
		t.Errorf("show of a session half in fast mode:\n%s", out)
	}
	out, _ = h.must("usage", "model")
	// 1,000 input at $5 and 1,000 output at $25: $0.03, twice that fast.
	for _, want := range []string{"claude-opus-4-8 (fast)", "$0.06", "$0.03"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage model lacks %q:\n%s", want, out)
		}
	}
}

// codexRollout is a Codex rollout of one prompt and one answer, a thread
// of parent's when parent is set, spawning the thread spawns when it is;
// with tokens, the token_count of the answer (input, cached, output), else
// none (rollouts before token_count record no usage).
func codexRollout(id, parent, spawns string, at int, tokens []int) []string {
	ts := func(s int) string { return fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", at, s) }
	source := `"cli"`
	if parent != "" {
		source = fmt.Sprintf(`{"subagent":{"thread_spawn":{"parent_thread_id":%q,"depth":1}}}`, parent)
	}
	lines := []string{
		fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":"/w/syn","originator":"codex_cli_rs","cli_version":"0.140.0","source":%s}}`, ts(0), id, ts(0), source),
		fmt.Sprintf(`{"timestamp":%q,"type":"turn_context","payload":{"cwd":"/w/syn","model":"gpt-5.5","approval_policy":"never","sandbox_policy":{"type":"danger-full-access"}}}`, ts(1)),
		fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"user_message","message":"do it"}}`, ts(1)),
	}
	if spawns != "" {
		lines = append(lines, fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"x\"}","call_id":"call-1"}}`, ts(5)))
	}
	lines = append(lines, fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`, ts(10)))
	if tokens != nil {
		u := fmt.Sprintf(`{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}`, tokens[0], tokens[1], tokens[2], tokens[0]+tokens[2])
		lines = append(lines, fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":%s,"last_token_usage":%s,"model_context_window":258400}}}`, ts(11), u, u))
	}
	if spawns != "" {
		lines = append(lines, fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"call-1","output":"{\"agent_id\":\"%s\"}"}}`, ts(50), spawns))
	}
	return lines
}

// A Codex agent's thread is a lane of its parent's map and a map of its
// own; list shows it under its parent, marked, as a part of the parent's
// tokens and cost rather than more of them, and list --json names its
// parent.
func TestListShowsASpawnedSessionInItsParent(t *testing.T) {
	h := newCostHome(t, "codex")
	const parent, child = "019c0000-0000-7000-8000-00000000aaaa", "019c0000-0000-7000-8000-00000000bbbb"
	h.write("sessions/2026/03/01/rollout-2026-03-01T10-00-00-"+parent+".jsonl", codexRollout(parent, "", child, 0, []int{10000, 2000, 100})...)
	h.write("sessions/2026/03/01/rollout-2026-03-01T10-00-06-"+child+".jsonl", codexRollout(child, parent, "", 0, []int{50000, 40000, 1000})...)
	h.must("scan")
	out, _ := h.must("list")
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], parent) || !strings.HasPrefix(lines[2], "↳ "+child) ||
		!strings.Contains(out, "↳ a session spawned by the one above it: its tokens and cost are part of that session's") {
		t.Errorf("list of a parent and the agent it spawned:\n%s", out)
	}
	out, _ = h.must("list", "--json")
	var es []listEntry
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, e := range es {
		parents[e.ID] = e.Parent
	}
	if len(es) != 2 || parents[child] != "codex/"+parent || parents[parent] != "" {
		t.Errorf("list --json: parents %q", parents)
	}
	// report, as the page counts, says one session.
	if _, errOut := h.must("report", "-o", filepath.Join(h.t.TempDir(), "r.html")); !strings.Contains(errOut, "agentmap report: 1 session -> ") {
		t.Errorf("report of a parent and the agent it spawned: %q", errOut)
	}
	// Alone in a listing, the spawned session is no part of another row.
	out, _ = h.must("list", "--outcome", "completed", "--since", "2026-03-01T10:00:05Z")
	if strings.Contains(out, "↳") || !strings.Contains(out, child) {
		t.Errorf("list of the spawned session alone:\n%s", out)
	}
}

// A session whose requests recorded no token usage (a Codex rollout
// before token_count, Cursor's) reads as such in show and list, never as
// 0 tokens and no cost.
func TestRequestsWithoutUsageAreShown(t *testing.T) {
	h := newCostHome(t, "codex")
	const id = "019c0000-0000-7000-8000-00000000cccc"
	h.write("sessions/2026/03/01/rollout-2026-03-01T10-00-00-"+id+".jsonl", codexRollout(id, "", "", 0, nil)...)
	h.must("scan")
	out, _ := h.must("show", id[:8])
	if !strings.Contains(out, "  1 model request, usage not recorded: tokens and cost unknown") || strings.Contains(out, "0 tokens") {
		t.Errorf("show of a session without usage:\n%s", out)
	}
	out, _ = h.must("list")
	if !strings.Contains(out, "not recorded") {
		t.Errorf("list of a session without usage:\n%s", out)
	}
	out, _ = h.must("usage", "session")
	if !strings.Contains(out, "usage not recorded") || !strings.Contains(out, "1 model request in 1 session (codex) recorded no token usage") {
		t.Errorf("usage session of a session without usage:\n%s", out)
	}
}

// list --json tells the requests that recorded no usage from a session
// that used no tokens, with the name show --json and usage --json give
// them: from the state's records, and from the map files alone (a store
// copied in, no record naming them).
func TestListJSONCountsRequestsWithoutUsage(t *testing.T) {
	h := newCostHome(t, "codex")
	const none, some = "019c0000-0000-7000-8000-00000000dddd", "019c0000-0000-7000-8000-00000000eeee"
	h.write("sessions/2026/03/01/rollout-2026-03-01T10-00-00-"+none+".jsonl", codexRollout(none, "", "", 0, nil)...)
	// Two requests, the second with no token_count after it.
	partial := codexRollout(some, "", "", 1, []int{1000, 0, 10})
	partial = append(partial,
		`{"timestamp":"2026-03-01T10:01:20.000Z","type":"event_msg","payload":{"type":"user_message","message":"again"}}`,
		`{"timestamp":"2026-03-01T10:01:30.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`)
	h.write("sessions/2026/03/01/rollout-2026-03-01T10-01-00-"+some+".jsonl", partial...)
	h.must("scan")
	want := map[string]int{none: 1, some: 1}
	check := func(how string, out string) {
		t.Helper()
		var es []struct {
			ID       string `json:"id"`
			Requests int    `json:"requests"`
			Tokens   int64  `json:"tokens"`
			NoUsage  *int   `json:"requestsWithoutUsage"`
		}
		if err := json.Unmarshal([]byte(out), &es); err != nil || len(es) != 2 {
			t.Fatalf("%s: %v\n%s", how, err, out)
		}
		for _, e := range es {
			if e.NoUsage == nil || *e.NoUsage != want[e.ID] {
				t.Errorf("%s: %s (%d requests, %d tokens): requestsWithoutUsage %v, want %d", how, e.ID, e.Requests, e.Tokens, e.NoUsage, want[e.ID])
			}
		}
	}
	out, _ := h.must("list", "--json")
	check("list --json", out)
	if sum := h.show(some); sum.NoUsage != 1 || sum.Totals.Requests != 2 {
		t.Fatalf("show of the session with some usage: %d of %d requests without usage", sum.NoUsage, sum.Totals.Requests)
	} else if len(sum.Lanes) == 0 || sum.Lanes[0].NoUsage != 1 {
		// and its lane says it too, in the same words
		t.Errorf("show --json's main lane: %+v, want requestsWithoutUsage 1", sum.Lanes)
	}
	copied := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(filepath.Join(copied, "maps"), os.DirFS(filepath.Join(h.data, "maps"))); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "list", "--json", "--data-dir", copied)
	if code != exitOK {
		t.Fatalf("list --json of maps alone: exit %d %s", code, errOut)
	}
	check("list --json of maps alone", out)
}

// A price set in the config after the maps were written reprices them at
// the next scan, with no flush: the maps' options changed.
func TestScanRepricesTheMapsAfterAPriceChange(t *testing.T) {
	h := newCostHome(t, "claude")
	const sid = "5b0a8f54-2f7e-5b8c-8f0e-3c1d2a4b5c6d"
	usage := `{"input_tokens":1000,"cache_read_input_tokens":10000,"cache_creation_input_tokens":0,"output_tokens":100}`
	h.write("projects/-w-syn/"+sid+".jsonl", claudeRequest(sid, 1, "claude-zeta-1", usage)...)
	h.must("scan")
	h.configure("[prices.\"claude-zeta\"]\ninput = 2.0\ncache_write = 2.5\ncache_read = 0.2\noutput = 10.0\n")
	if _, errOut := h.must("scan"); !strings.Contains(errOut, "writing the maps again (1 session to go through)") {
		t.Errorf("the scan did not say it writes the maps again:\n%s", errOut)
	}
	sum := h.show(sid[:8])
	if len(sum.Unpriced) != 0 || sum.Totals.CostUSD != 0.005 {
		t.Errorf("after a scan with the new price: unpriced %q, cost $%v", sum.Unpriced, sum.Totals.CostUSD)
	}
	if out, _ := h.must("list"); strings.Contains(out, "priced in the config since") {
		t.Errorf("list still says the maps leave the model out:\n%s", out)
	}
	// flush --all --rewrite without a daemon counts the maps it wrote
	// again for the new prices, and none twice.
	h.configure("[prices.\"claude-zeta\"]\ninput = 4.0\ncache_write = 5\ncache_read = 0.4\noutput = 20.0\n")
	if out, _ := h.must("flush", "--all", "--rewrite"); !strings.Contains(out, "written again: 1 map\n") {
		t.Errorf("flush --all --rewrite after a price change:\n%s", out)
	}
	sum = h.show(sid[:8])
	if sum.Totals.CostUSD != 0.01 {
		t.Errorf("after flush --all --rewrite with the new price: $%v", sum.Totals.CostUSD)
	}
}

// A session's agent reads the same in list, show and usage (claude, as
// --agent takes it, not the map's claude-code), in text and JSON.
func TestAgentNamedAlikeByEveryCommand(t *testing.T) {
	for _, a := range agents.All {
		if got := report.AgentName(a.Tool); got != a.Name {
			t.Errorf("agent tool %q is named %q by usage, %q by list", a.Tool, got, a.Name)
		}
	}
	h := newCostHome(t, "claude")
	const sid = "7f3e1c2a-4b5d-5e6f-8a9b-0c1d2e3f4a5b"
	usage := `{"input_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":100}`
	h.write("projects/-w-syn/"+sid+".jsonl", claudeRequest(sid, 1, "claude-sonnet-4-5", usage)...)
	h.must("scan")
	var listed []struct{ Agent string }
	out, _ := h.must("list", "--json")
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	var tab struct{ Rows []struct{ Agent string } }
	out, _ = h.must("usage", "session", "--json")
	if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Rows) == 0 {
		t.Fatalf("usage session --json: %v\n%s", err, out)
	}
	if listed[0].Agent != "claude" || tab.Rows[0].Agent != "claude" || h.show(sid[:8]).Agent != "claude-code" {
		t.Errorf("agent in list %q, usage %q; want claude in both", listed[0].Agent, tab.Rows[0].Agent)
	}
	if out, _ = h.must("usage", "session"); strings.Contains(out, "claude-code") || !strings.Contains(out, " claude ") {
		t.Errorf("usage session names the agent otherwise than list:\n%s", out)
	}
}

// A log with nothing to map counts in the scan's progress (a session met)
// but not in its last line (sessions with a map, as status and list count
// them): the last line says how many more it met, so that the two numbers
// do not disagree unexplained.
func TestScanSaysWhichSessionsHadNothingToMap(t *testing.T) {
	h := newCostHome(t, "claude")
	const sid = "0d6c2f4e-8a1b-5c3d-9e7f-1a2b3c4d5e6f"
	usage := `{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}`
	h.write("projects/-w-syn/"+sid+".jsonl", claudeRequest(sid, 1, "claude-sonnet-4-5", usage)...)
	h.write("projects/-w-syn/5e1f0a3b-7c2d-4e6f-8a9b-0c1d2e3f4a5b.jsonl", `{"type":"summary","summary":"s","leafUuid":"u"}`)
	_, errOut := h.must("scan")
	if !strings.Contains(errOut, "2 sessions)\n") || !strings.Contains(errOut, "read, 1 session (1 more had nothing to map)\n") {
		t.Errorf("scan of a log with nothing to map beside one with a session:\n%s", errOut)
	}
	if _, errOut = h.must("scan"); !strings.Contains(errOut, "read, 1 session\n") {
		t.Errorf("second scan:\n%s", errOut)
	}
}

// show names the models of the main lane, which a map leaves without a
// model field: its requests' models in the order of their first use.
func TestShowNamesTheModelsOfTheMainLane(t *testing.T) {
	h := newCostHome(t, "claude")
	const sid = "5b0a8f54-2f7e-5b8c-8f0e-3c1d2a4b5c7e"
	usage := `{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}`
	var lines []string
	for i, model := range []string{"claude-zeta-2", "claude-eta-1", "claude-zeta-2"} {
		lines = append(lines, claudeRequest(sid, i+1, model, usage)...)
	}
	h.write("projects/-w-syn/"+sid+".jsonl", lines...)
	h.must("scan")
	sum := h.show(sid)
	// In JSON the lane's model field stays the map's (none), and its
	// requests' models are a list of their own.
	if len(sum.Lanes) != 1 || sum.Lanes[0].ID != "main" || sum.Lanes[0].Model != "" ||
		!slices.Equal(sum.Lanes[0].Models, []string{"claude-zeta-2", "claude-eta-1"}) {
		t.Errorf("show --json lanes: %+v", sum.Lanes)
	}
	out, _ := h.must("show", sid)
	if !regexp.MustCompile(`\n  main +main +- +claude-zeta-2, claude-eta-1 +`).MatchString(out) {
		t.Errorf("show's lanes do not name the main lane's models:\n%s", out)
	}
}
