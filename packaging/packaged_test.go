package packaging

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The .deb's unit in /usr/lib/systemd/user, turned on the distro way, is
// the service: status tells its state, start/stop/restart drive it, and
// uninstall turns it off for the user and leaves the file to the package.
func TestPackagedUnit(t *testing.T) {
	ctx := context.Background()
	s := tempLinuxSpec(t)
	old := PackagedUnitPath
	PackagedUnitPath = filepath.Join(t.TempDir(), "usr", "lib", "systemd", "user", UnitName+".service")
	defer func() { PackagedUnitPath = old }()

	if s.packaged() {
		t.Fatal("packaged without the package's unit")
	}
	os.MkdirAll(filepath.Dir(PackagedUnitPath), 0o755)
	if err := os.WriteFile(PackagedUnitPath, []byte("[Unit]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !s.packaged() {
		t.Fatal("the package's unit is not seen")
	}
	var ran []string
	answers := map[string]string{}
	run := func(_ context.Context, args ...string) ([]byte, error) {
		cmd := strings.Join(args, " ")
		ran = append(ran, cmd)
		if cmd == "systemctl --user is-system-running" {
			return []byte("running\n"), nil
		}
		for k, v := range answers {
			if strings.Contains(cmd, k) {
				return []byte(v + "\n"), nil
			}
		}
		return nil, nil
	}
	for _, tc := range []struct{ active, enabled, want string }{
		{"active", "enabled", "running (the package's unit " + PackagedUnitPath + ", enabled)"},
		{"inactive", "disabled", "stopped (the package's unit " + PackagedUnitPath + ", not enabled: systemctl --user enable --now agentmap turns it on at every login)"},
		{"failed", "enabled", "failed (journalctl --user -u agentmap tells why) (the package's unit " + PackagedUnitPath + ", enabled)"},
	} {
		answers["is-active"], answers["is-enabled"] = tc.active, tc.enabled
		if got := packagedStatus(ctx, s, run); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.active, tc.enabled, got, tc.want)
		}
	}
	noManager := s
	noManager.RuntimeDir = ""
	if got := packagedStatus(ctx, noManager, run); !strings.HasPrefix(got, "installed (the package's unit ") {
		t.Errorf("without systemd --user: %q", got)
	}

	p, err := ControlPlan(ctx, s, Restart, run)
	if err != nil {
		t.Fatalf("restart of the package's unit: %v", err)
	}
	same(t, "restart runs", commands(p), []string{"systemctl --user restart agentmap.service"})

	u, err := uninstallPlan(ctx, s, false, run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "uninstall removes", writes(u), nil)
	same(t, "uninstall runs", commands(u), []string{"systemctl --user disable --now agentmap.service"})
	if notes := strings.Join(u.Notes, "\n"); !strings.Contains(notes, "the service is the package's unit "+PackagedUnitPath+": it is turned off for you") {
		t.Errorf("uninstall notes: %q", notes)
	}

	// A unit of install's takes precedence over the package's.
	unit, _ := s.File()
	os.MkdirAll(filepath.Dir(unit), 0o700)
	os.WriteFile(unit, []byte("x"), 0o644)
	if s.packaged() {
		t.Error("the user's own unit is taken for the package's")
	}
}
