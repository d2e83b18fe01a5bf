package attemptdb

import (
	"encoding/json"
	"strings"
	"testing"
)

const device = "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f"

// validLine is a minimal conformant event with the given seq and ids.
func validLine(seq int, id string) map[string]any {
	return map[string]any{
		"event_id": Derive(prefixEvent, id), "schema_version": 1, "device_id": device,
		"source_seq": seq, "observed_at": 1767225600000000, "captured_at": 0,
		"provider": "codex", "adapter_version": "agentmap test", "capture_mode": "metadata_only",
		"provider_event_name": "agentplay.exec", "kind": "tool_call_started",
		"project":    map[string]any{"project_id": Derive(prefixProject, "root", device, "shop"), "root": "shop", "name": "shop"},
		"session_id": SessionID("codex", "s-1"), "provider_session_id": "s-1",
		"span_id": Derive(prefixSpan, id), "agent": map[string]any{"agent_id": MainAgentID(SessionID("codex", "s-1"))},
		"tool":  map[string]any{"name": "shell", "category": "shell", "call_id": id},
		"attrs": map[string]any{"command_category": "vcs", "x_codex_turn_kind": "user"},
	}
}

func stream(t *testing.T, lines ...map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCheckRules breaks each rule of the conformance rules once and expects
// exactly that section to fail.
func TestCheckRules(t *testing.T) {
	tests := []struct {
		name    string
		section string
		mutate  func(a, b map[string]any)
	}{
		{"missing required field", "envelope", func(a, b map[string]any) { delete(b, "adapter_version") }},
		{"bad kind", "envelope", func(a, b map[string]any) { b["kind"] = "tool_started" }},
		{"bad capture mode", "envelope", func(a, b map[string]any) { b["capture_mode"] = "full" }},
		{"bad tool category", "envelope", func(a, b map[string]any) { b["tool"].(map[string]any)["category"] = "bash" }},
		{"bad outcome status", "envelope", func(a, b map[string]any) { b["outcome"] = map[string]any{"status": "ok"} }},
		{"exit code beyond i32", "envelope", func(a, b map[string]any) {
			b["outcome"] = map[string]any{"status": "failure", "exit_code": 1 << 40}
		}},
		{"negative source_seq", "envelope", func(a, b map[string]any) { b["source_seq"] = -1 }},
		{"schema_version beyond u16", "envelope", func(a, b map[string]any) { b["schema_version"] = 70000 }},
		{"not a uuid", "envelope", func(a, b map[string]any) { b["session_id"] = "session-1" }},
		{"schema_version 2", "envelope", func(a, b map[string]any) { b["schema_version"] = 2 }},
		{"nil event id", "envelope", func(a, b map[string]any) { b["event_id"] = "00000000-0000-0000-0000-000000000000" }},
		{"duplicate event id", "envelope", func(a, b map[string]any) { b["event_id"] = a["event_id"] }},
		{"nil device id", "envelope", func(a, b map[string]any) { b["device_id"] = "00000000000000000000000000000000" }},
		{"empty provider", "identity", func(a, b map[string]any) { b["provider"] = " " }},
		{"empty provider session id", "identity", func(a, b map[string]any) { b["provider_session_id"] = "" }},
		{"session id not derived", "identity", func(a, b map[string]any) { b["provider_session_id"] = "s-2" }},
		{"nil project id", "identity", func(a, b map[string]any) {
			b["project"].(map[string]any)["project_id"] = "00000000-0000-0000-0000-000000000000"
		}},
		{"empty root", "identity", func(a, b map[string]any) { b["project"].(map[string]any)["root"] = "" }},
		{"empty name", "identity", func(a, b map[string]any) { b["project"].(map[string]any)["name"] = "" }},
		{"observed_at zero", "temporal", func(a, b map[string]any) { b["observed_at"] = 0 }},
		{"captured_at negative", "temporal", func(a, b map[string]any) { b["captured_at"] = -1 }},
		{"source_seq repeats", "temporal", func(a, b map[string]any) { b["source_seq"] = 1 }},
		{"hlc decreases", "temporal", func(a, b map[string]any) { a["hlc"] = 5; b["hlc"] = 4 }},
		{"parent span unresolved", "causality", func(a, b map[string]any) { b["parent_span_id"] = Derive(prefixSpan, "nowhere") }},
		{"empty adapter version", "provenance", func(a, b map[string]any) { b["adapter_version"] = "" }},
		{"empty provider event name", "provenance", func(a, b map[string]any) { b["provider_event_name"] = "" }},
		{"content under metadata_only", "provenance", func(a, b map[string]any) { b["content"] = map[string]any{} }},
		{"raw under metadata_only", "provenance", func(a, b map[string]any) { b["raw"] = "x" }},
		{"attr not allowlisted", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["verb"] = "git" }},
		{"attr bad extension", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["x_codex"] = 1 }},
		{"attr upper-case extension", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["x_Codex_kind"] = 1 }},
		{"attr with home path", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["cwd"] = "/home/alice/shop" }},
		{"attr with drive home", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["cwd"] = `C:\Users\alice` }},
		{"attr email", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["source"] = "alice@example.com" }},
		{"attr two lines", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["reason"] = "a\nb" }},
		{"attr too long", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["reason"] = strings.Repeat("é", 129) }},
		{"attr array with home path", "extensions", func(a, b map[string]any) {
			b["attrs"].(map[string]any)["path_extensions"] = []any{".go", "/Users/alice/x"}
		}},
		{"attr object outside provider", "extensions", func(a, b map[string]any) { b["attrs"].(map[string]any)["model"] = map[string]any{} }},
		{"top-level key not x_", "extensions", func(a, b map[string]any) { b["extra"] = 1 }},
	}
	if rep, err := Check(strings.NewReader(stream(t, validLine(1, "a"), validLine(2, "b")))); err != nil || !rep.Compatible() {
		t.Fatalf("valid stream: %v %s", err, rep)
	}
	for _, tt := range tests {
		a, b := validLine(1, "a"), validLine(2, "b")
		tt.mutate(a, b)
		rep, err := Check(strings.NewReader(stream(t, a, b)))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Compatible() {
			t.Errorf("%s: stream passed", tt.name)
			continue
		}
		for _, s := range Sections {
			if got := len(rep.Sections[s].Failures) > 0; got != (s == tt.section) {
				t.Errorf("%s: section %s failed=%v:\n%s", tt.name, s, got, rep)
			}
		}
	}
}

// TestCheckNotes: what the rules only note never fails a stream.
func TestCheckNotes(t *testing.T) {
	a, b := validLine(1, "a"), validLine(5, "b")
	b["kind"] = "unknown"
	delete(b["agent"].(map[string]any), "agent_id")
	b["kind"] = "tool_call_finished"
	b["tool"].(map[string]any)["call_id"] = "never-started"
	c := validLine(0, "c")
	c["provider"] = "Codex-CLI" // alias, normalised before the derivation
	c["attrs"].(map[string]any)["provider"] = map[string]any{"n": 1, "s": "plain"}
	c["x_agentmap_extra"] = true
	rep, err := Check(strings.NewReader(stream(t, a, b, c) + "\n  \n"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Compatible() {
		t.Fatalf("notes failed the stream:\n%s", rep)
	}
	if rep.Lines != 3 || rep.Events != 3 {
		t.Errorf("lines %d events %d", rep.Lines, rep.Events)
	}
	for _, s := range []string{"identity", "temporal", "causality"} {
		if len(rep.Sections[s].Notes) == 0 {
			t.Errorf("no %s note", s)
		}
	}
}

// TestValueRules pins the string value rule's edges.
func TestValueRules(t *testing.T) {
	for s, want := range map[string]bool{
		"src/app.ts": true, "~/proj": true, "a@b": true, "see alice@example.com now": true,
		"alice@example.com": false, "/home/alice": false, "x/Users/y": false, `d:/Users/x`: false,
		strings.Repeat("a", 256): true, strings.Repeat("a", 257): false, "a\rb": false,
	} {
		if got := ValueAllowed(s); got != want {
			t.Errorf("ValueAllowed(%q) = %v, want %v", s, got, want)
		}
	}
	for k, want := range map[string]bool{
		"x_codex_turn_kind": true, "x_gemini_cli_mode": true, "x_": false, "x_codex": false,
		"x__a": false, "x_a_": false, "x_Codex_kind": false, "tool_output_bytes": true, "verb": false,
	} {
		if got := AttrKeyAllowed(k); got != want {
			t.Errorf("AttrKeyAllowed(%q) = %v, want %v", k, got, want)
		}
	}
	if len(allowedAttrKeys) != 76 {
		t.Errorf("%d allowlisted keys, want 76", len(allowedAttrKeys))
	}
}

func TestReportJSON(t *testing.T) {
	rep, err := Check(strings.NewReader(stream(t, validLine(1, "a")) + "not json\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range append([]string{"schema_version", "lines", "events"}, Sections...) {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	if !strings.Contains(string(got["envelope"]), `"line":2`) || rep.Lines != 2 || rep.Events != 1 {
		t.Errorf("report %s", b)
	}
}
