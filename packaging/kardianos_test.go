package packaging

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Our templates are kardianos templates: kardianos, given ServiceConfig,
// writes exactly the unit RenderUnit renders (and --dry-run prints). Only
// the Linux backend can run here; the launchd one is built for macOS only.
func TestKardianosWritesTheSameUnit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kardianos' systemd backend exists on Linux only")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	// No systemctl on PATH: kardianos writes the file, then fails to
	// enable it, touching no real service manager.
	t.Setenv("PATH", t.TempDir())
	s := linuxSpec()
	s.Home = home
	// With the environment install carries, which kardianos writes too.
	s.CarryEnv([]string{"CODEX_HOME", "XDG_DATA_HOME"}, func(k string) string { return "/srv/" + k })
	svc, err := kardianos(s)
	if err != nil {
		t.Fatal(err)
	}
	_ = svc.Install() // the systemctl calls fail, by design
	got, err := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", UnitName+".service"))
	if err != nil {
		t.Fatalf("kardianos wrote no unit: %v", err)
	}
	want, err := RenderUnit(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("kardianos renders\n%s\nRenderUnit renders\n%s", got, want)
	}
	if path, _ := s.File(); path != filepath.Join(home, ".config", "systemd", "user", UnitName+".service") {
		t.Errorf("Spec.File = %s, kardianos uses another path", path)
	}
}

func TestTemplateEngine(t *testing.T) {
	funcs := map[string]templateFunc{"up": func(s string) string { return s + "!" }}
	data := map[string]any{"A": "a", "E": "", "L": []string{"x", "y"}, "N": []string(nil)}
	tests := []struct{ src, want string }{
		{"{{A}}-{{ A | up | up }}", "a-a!!"},
		{"{{if A}}yes{{else}}no{{end}}{{if E}}yes{{else}}no{{end}}", "yesno"},
		{"{{if L}}[{{range L}}<{{. | up}}>{{end}}]{{end}}{{if N}}n{{end}}", "[<x!><y!>]"},
		{"{{range N}}never{{end}}plain", "plain"},
	}
	for _, tt := range tests {
		got, err := render(tt.src, data, funcs)
		if err != nil || string(got) != tt.want {
			t.Errorf("render(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
	for _, bad := range []string{"{{A", "{{Z}}", "{{A | nope}}", "{{if A}}x", "{{end}}", "{{range A}}x{{end}}", "{{L}}"} {
		if _, err := render(bad, data, funcs); err == nil {
			t.Errorf("render(%q) accepted", bad)
		}
	}
}
