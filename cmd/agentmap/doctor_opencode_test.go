package main

import (
	"strings"
	"testing"
)

func TestOpenCodeDBCheck(t *testing.T) {
	for _, tc := range []struct {
		env     string
		enabled bool
		says    string // "" when there is nothing to say
	}{
		{"", true, ""},
		{"/srv/oc/opencode.db", true, ""},
		{"work/opencode-beta.db", true, ""},
		{"/srv/oc/sessions.sqlite", true, "called sessions.sqlite"},
		{":memory:", true, "in memory only"},
		{"/srv/oc/sessions.sqlite", false, ""},
	} {
		got, ok := openCodeDBCheck(tc.env, tc.enabled)
		if ok != (tc.says != "") || ok && (got.Level != levelWarn || !strings.Contains(got.Msg, tc.says)) {
			t.Errorf("OPENCODE_DB=%q enabled=%v: %v %+v, want a warning saying %q", tc.env, tc.enabled, ok, got, tc.says)
		}
	}
}
