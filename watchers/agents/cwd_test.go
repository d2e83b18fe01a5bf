package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSniffCWD(t *testing.T) {
	dir := t.TempDir()
	big := `{"pad":"` + strings.Repeat("x", SniffLineMax+10) + `","cwd":"/never"}` + "\n"
	for _, tc := range []struct {
		name, body, cwd string
		short           bool
	}{
		{"claude", `{"type":"summary"}` + "\n" + `{"type":"user","cwd":"/w/app"}` + "\n", "/w/app", false},
		{"codex", `{"type":"session_meta","payload":{"id":"x","cwd":"/w/cx"}}` + "\n", "/w/cx", false},
		{"over the bound", big + `{"cwd":"/w/after"}` + "\n", "/w/after", false},
		{"none yet", `{"type":"summary"}` + "\n", "", true},
		{"torn", `{"type":"summary"}` + "\n" + `{"cwd":"/w/torn"`, "", true},
		{"garbage", "not json\n\x00\n" + `{"cwd":"/w/g"}` + "\n", "/w/g", false},
		{"none in the first lines", strings.Repeat("{}\n", SniffLines+1) + `{"cwd":"/late"}` + "\n", "", false},
	} {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, []byte(tc.body), 0o600)
		cwd, short := SniffCWD(p)
		if cwd != tc.cwd || short != tc.short {
			t.Errorf("%s: got %q %v, want %q %v", tc.name, cwd, short, tc.cwd, tc.short)
		}
	}
}
