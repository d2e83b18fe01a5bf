package config

import (
	"reflect"
	"testing"
)

// TestAgentRootsFollowTheClientsVariables checks the roots of OpenCode,
// Copilot CLI and Gemini CLI against the variables each client reads
// itself: $XDG_DATA_HOME and $OPENCODE_DB (absolute, or relative to the
// data directory), $COPILOT_HOME, $GEMINI_CLI_HOME.
func TestAgentRootsFollowTheClientsVariables(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		p                        platform
		opencode, copilot, gemin []string
	}{
		{"defaults", linux(nil),
			[]string{"/home/u/.local/share/opencode"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"variables", linux(map[string]string{"XDG_DATA_HOME": "/xdg", "COPILOT_HOME": "~/cp", "GEMINI_CLI_HOME": "/g"}),
			[]string{"/xdg/opencode"}, []string{"/home/u/cp", "/home/u/.copilot"}, []string{"/g/.gemini", "/home/u/.gemini"}},
		{"OPENCODE_DB elsewhere", linux(map[string]string{"OPENCODE_DB": "/srv/oc/opencode.db"}),
			[]string{"/home/u/.local/share/opencode", "/srv/oc"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"OPENCODE_DB of a channel, relative", linux(map[string]string{"XDG_DATA_HOME": "/xdg", "OPENCODE_DB": "work/opencode-beta.db"}),
			[]string{"/xdg/opencode", "/xdg/opencode/work"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"OPENCODE_DB beside the default", linux(map[string]string{"OPENCODE_DB": "opencode-dev.db"}),
			[]string{"/home/u/.local/share/opencode"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"OPENCODE_DB of another name", linux(map[string]string{"OPENCODE_DB": "/srv/oc/sessions.sqlite"}),
			[]string{"/home/u/.local/share/opencode"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"OPENCODE_DB in memory", linux(map[string]string{"OPENCODE_DB": ":memory:"}),
			[]string{"/home/u/.local/share/opencode"}, []string{"/home/u/.copilot"}, []string{"/home/u/.gemini"}},
		{"windows", platform{goos: "windows", home: `C:\Users\u`, getenv: func(k string) string {
			return map[string]string{"OPENCODE_DB": `D:\oc\opencode.db`}[k]
		}}, []string{`C:\Users\u\.local\share\opencode`, `D:\oc`}, []string{`C:\Users\u\.copilot`}, []string{`C:\Users\u\.gemini`}},
	} {
		c := defaultsFor(tc.p)
		if got := c.Agents.OpenCode.Roots; !reflect.DeepEqual(got, tc.opencode) {
			t.Errorf("%s: opencode roots %q, want %q", tc.name, got, tc.opencode)
		}
		if got := c.Agents.Copilot.Roots; !reflect.DeepEqual(got, tc.copilot) {
			t.Errorf("%s: copilot roots %q, want %q", tc.name, got, tc.copilot)
		}
		if got := c.Agents.Gemini.Roots; !reflect.DeepEqual(got, tc.gemin) {
			t.Errorf("%s: gemini roots %q, want %q", tc.name, got, tc.gemin)
		}
	}
}
