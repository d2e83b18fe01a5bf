package packaging

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state/datadir"
)

// fakeManager answers like systemctl and launchctl and records what ran.
type fakeManager struct {
	ran      []string
	userd    string // answer of systemctl --user is-system-running
	linger   string // answer of loginctl show-user --property=Linger
	loaded   bool   // launchctl print succeeds
	failWith string // a command prefix that fails
}

func (f *fakeManager) run(_ context.Context, args ...string) ([]byte, error) {
	cmd := strings.Join(args, " ")
	f.ran = append(f.ran, cmd)
	if f.failWith != "" && strings.HasPrefix(cmd, f.failWith) {
		return []byte("Failed to do it\nsecond line"), errors.New("exit status 1")
	}
	switch {
	case cmd == "systemctl --user is-system-running":
		if f.userd == "" {
			return []byte("offline\n"), errors.New("exit status 1")
		}
		return []byte(f.userd + "\n"), nil
	case strings.HasPrefix(cmd, "loginctl show-user"):
		return []byte(f.linger + "\n"), nil
	case strings.HasPrefix(cmd, "launchctl print"):
		if !f.loaded {
			return nil, errors.New("exit status 113")
		}
	case strings.HasPrefix(cmd, "launchctl bootstrap"):
		f.loaded = true
	case strings.HasPrefix(cmd, "launchctl bootout"):
		f.loaded = false
	}
	return nil, nil
}

func TestLingerNote(t *testing.T) {
	for linger, want := range map[string]bool{"no": true, "yes": false, "": false} {
		s := tempLinuxSpec(t)
		p, err := InstallPlan(context.Background(), s, (&fakeManager{userd: "running", linger: linger}).run)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(p.Notes, "\n"), "loginctl enable-linger")
		if got != want {
			t.Errorf("Linger=%q: note %v, want %v (%q)", linger, got, want, p.Notes)
		}
	}
}

// commands lists the Run steps of a plan.
func commands(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Op == Run {
			out = append(out, strings.Join(s.Args, " "))
		}
	}
	return out
}

func writes(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.Op == Write || s.Op == Remove || s.Op == Purge {
			out = append(out, s.Path)
		}
	}
	return out
}

func tempLinuxSpec(t *testing.T) Spec {
	home := t.TempDir()
	rt := filepath.Join(home, "run")
	if err := os.MkdirAll(filepath.Join(rt, "systemd"), 0o700); err != nil {
		t.Fatal(err)
	}
	return Spec{GOOS: "linux", Home: home, UID: 1000, Binary: "/usr/local/bin/agentmap",
		DataDir: filepath.Join(home, "data"), RuntimeDir: rt}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestLinuxInstallIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := tempLinuxSpec(t)
	m := &fakeManager{userd: "degraded"}
	unit := filepath.Join(s.Home, ".config", "systemd", "user", "agentmap.service")

	p, err := InstallPlan(ctx, s, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "first install writes", writes(p), []string{unit})
	same(t, "first install runs", commands(p), []string{
		"systemctl --user daemon-reload",
		"systemctl --user enable agentmap.service",
		"systemctl --user start agentmap.service",
	})
	m.ran = nil
	var log bytes.Buffer
	if err := p.Apply(ctx, m.run, &log); err != nil {
		t.Fatal(err)
	}
	same(t, "apply ran", m.ran, commands(p))
	st, err := os.Stat(unit)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o644 {
		t.Errorf("unit mode %o", st.Mode().Perm())
	}
	if want, _ := RenderUnit(s); !bytes.Equal(mustRead(t, unit), want) {
		t.Error("installed unit differs from the render")
	}

	again, err := InstallPlan(ctx, s, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "second install writes", writes(again), nil)
	same(t, "second install runs", commands(again), []string{
		"systemctl --user enable agentmap.service",
		"systemctl --user start agentmap.service",
	})

	s.ConfigFile = "/etc/agentmap.toml"
	changed, err := InstallPlan(ctx, s, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "changed install writes", writes(changed), []string{unit})
	same(t, "changed install runs", commands(changed), []string{
		"systemctl --user daemon-reload",
		"systemctl --user enable agentmap.service",
		"systemctl --user restart agentmap.service",
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLinuxWithoutUserSystemd(t *testing.T) {
	ctx := context.Background()
	for name, tweak := range map[string]func(*Spec, *fakeManager){
		"no runtime dir":      func(s *Spec, m *fakeManager) { s.RuntimeDir = "" },
		"no systemd dir":      func(s *Spec, m *fakeManager) { s.RuntimeDir = s.Home },
		"manager not running": func(s *Spec, m *fakeManager) { m.userd = "" },
		"manager offline":     func(s *Spec, m *fakeManager) { m.userd = "offline" },
	} {
		t.Run(name, func(t *testing.T) {
			s := tempLinuxSpec(t)
			m := &fakeManager{userd: "running"}
			tweak(&s, m)
			p, err := InstallPlan(ctx, s, m.run)
			if !errors.Is(err, ErrNoUserSystemd) {
				t.Fatalf("err = %v, want ErrNoUserSystemd", err)
			}
			for _, want := range []string{"loginctl enable-linger", "/usr/local/bin/agentmap run", "supervisor"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("explanation lacks %q: %v", want, err)
				}
			}
			if p == nil || len(p.Steps) == 0 {
				t.Error("the plan is still wanted for --dry-run")
			}
		})
	}
}

func TestLinuxUninstall(t *testing.T) {
	ctx := context.Background()
	s := tempLinuxSpec(t)
	m := &fakeManager{userd: "running"}
	p, _ := InstallPlan(ctx, s, m.run)
	if err := p.Apply(ctx, m.run, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.DataDir, "maps"), 0o700); err != nil {
		t.Fatal(err)
	}
	unit, _ := s.File()

	u, err := uninstallPlan(ctx, s, false, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "uninstall removes", writes(u), []string{unit})
	same(t, "uninstall runs", commands(u), []string{
		"systemctl --user disable --now agentmap.service",
		"systemctl --user daemon-reload",
		"systemctl --user reset-failed agentmap.service",
	})
	m.failWith = "systemctl --user reset-failed" // nothing failed: allowed
	if err := u.Apply(ctx, m.run, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Error("unit still there")
	}
	if _, err := os.Stat(s.DataDir); err != nil {
		t.Error("uninstall without --purge removed the data dir")
	}

	// A data directory agentmap did not make is never removed.
	notOurs, err := uninstallPlan(ctx, s, true, m.run)
	if err != nil {
		t.Fatal(err)
	}
	var msg bytes.Buffer
	if err := notOurs.Apply(ctx, m.run, &msg); err == nil || !strings.Contains(err.Error(), "did not make it") {
		t.Fatalf("purge of an unmarked directory: %v", err)
	}
	if _, err := os.Stat(s.DataDir); err != nil {
		t.Fatal("purge removed a directory agentmap did not make")
	}
	if err := datadir.Claim(s.DataDir); err != nil {
		t.Fatal(err)
	}
	again, err := uninstallPlan(ctx, s, true, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "purge removes", writes(again), []string{s.DataDir})
	same(t, "purge of an uninstalled service runs", commands(again), nil)
	if notes := strings.Join(again.Notes, "\n"); !strings.Contains(notes, "the service's log is in your systemd journal, which agentmap does not edit") {
		t.Errorf("purge says nothing true of the logs: %q", notes)
	}
	if err := again.Apply(ctx, m.run, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.DataDir); !os.IsNotExist(err) {
		t.Error("--purge left the data dir")
	}
}

func TestUninstallWithoutManagerRemovesEnableLink(t *testing.T) {
	s := tempLinuxSpec(t)
	unit, _ := s.File()
	wants := filepath.Join(filepath.Dir(unit), "default.target.wants", "agentmap.service")
	os.MkdirAll(filepath.Dir(wants), 0o700)
	os.WriteFile(unit, []byte("x"), 0o644)
	os.Symlink(unit, wants)
	p, err := uninstallPlan(context.Background(), s, false, (&fakeManager{}).run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "removes", writes(p), []string{unit, wants})
	same(t, "runs", commands(p), nil)
}

func TestApplyStopsAtAFailure(t *testing.T) {
	ctx := context.Background()
	s := tempLinuxSpec(t)
	m := &fakeManager{userd: "running", failWith: "systemctl --user enable"}
	p, _ := InstallPlan(ctx, s, m.run)
	err := p.Apply(ctx, m.run, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "systemctl --user enable agentmap.service failed") ||
		!strings.Contains(err.Error(), "Failed to do it") {
		t.Fatalf("err = %v", err)
	}
	for _, c := range m.ran {
		if strings.Contains(c, " start ") {
			t.Error("kept going after a failure")
		}
	}
}

func TestDarwinPlans(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s := Spec{GOOS: "darwin", Home: home, UID: 501, Binary: "/usr/local/bin/agentmap",
		DataDir: filepath.Join(home, "Library", "Application Support", "agentmap")}
	plist := filepath.Join(home, "Library", "LaunchAgents", LaunchdLabel+".plist")
	target := "gui/501/" + LaunchdLabel
	m := &fakeManager{}

	p, err := InstallPlan(ctx, s, m.run)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "install writes", writes(p), []string{plist})
	same(t, "install runs", commands(p), []string{"launchctl enable " + target, "launchctl bootstrap gui/501 " + plist})
	var mkdirs []string
	for _, st := range p.Steps {
		if st.Op == Mkdir {
			mkdirs = append(mkdirs, st.Path)
		}
	}
	same(t, "install creates", mkdirs, []string{s.DataDir, filepath.Dir(plist)})
	if err := p.Apply(ctx, m.run, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := parsePlist(mustRead(t, plist)); err != nil {
		t.Errorf("installed plist: %v", err)
	}

	again, _ := InstallPlan(ctx, s, m.run)
	same(t, "second install runs", commands(again), []string{"launchctl enable " + target})
	same(t, "second install writes", writes(again), nil)

	s.ConfigFile = "/etc/agentmap.toml"
	changed, _ := InstallPlan(ctx, s, m.run)
	same(t, "changed install runs", commands(changed), []string{
		"launchctl bootout " + target, "launchctl enable " + target, "launchctl bootstrap gui/501 " + plist,
	})

	for action, want := range map[string][]string{
		Start: {"launchctl kickstart " + target}, Restart: {"launchctl kickstart -k " + target}, Stop: {"launchctl bootout " + target},
	} {
		c, err := ControlPlan(ctx, s, action, m.run)
		if err != nil {
			t.Fatal(err)
		}
		same(t, action+" when loaded", commands(c), want)
	}
	m.loaded = false
	c, _ := ControlPlan(ctx, s, Start, m.run)
	same(t, "start when not loaded", commands(c), []string{"launchctl bootstrap gui/501 " + plist})

	m.loaded = true
	u, _ := uninstallPlan(ctx, s, false, m.run)
	same(t, "uninstall runs", commands(u), []string{"launchctl bootout " + target})
	same(t, "uninstall removes", writes(u), []string{plist})
}

// launchd may refuse a bootstrap for a moment after a bootout: the step is
// retried, and a lasting refusal is still an error.
func TestRetry(t *testing.T) {
	retryPause = 0
	calls := 0
	flaky := func(_ context.Context, args ...string) ([]byte, error) {
		calls++
		if calls < 3 {
			return []byte("Bootstrap failed: 5: Input/output error"), errors.New("exit status 5")
		}
		return nil, nil
	}
	p := &Plan{Steps: []Step{{Op: Run, Args: []string{"launchctl", "bootstrap"}, Retry: true}}}
	if err := p.Apply(context.Background(), flaky, &bytes.Buffer{}); err != nil || calls != 3 {
		t.Errorf("err %v after %d calls", err, calls)
	}
	calls = -100
	if err := p.Apply(context.Background(), flaky, &bytes.Buffer{}); err == nil || calls != -100+1+retries {
		t.Errorf("lasting failure: err %v after %d calls", err, calls+100)
	}
	p.Steps[0].Retry = false
	calls = 0
	if err := p.Apply(context.Background(), flaky, &bytes.Buffer{}); err == nil || calls != 1 {
		t.Errorf("a plain step was retried: %d calls", calls)
	}
}

func TestControlNeedsInstall(t *testing.T) {
	s := tempLinuxSpec(t)
	if _, err := ControlPlan(context.Background(), s, Start, (&fakeManager{userd: "running"}).run); err == nil ||
		!strings.Contains(err.Error(), "agentmap install") {
		t.Errorf("err = %v", err)
	}
}

func TestUnsupportedAndUnsafeSpecs(t *testing.T) {
	ctx := context.Background()
	win := Spec{GOOS: "windows", Home: `C:\Users\u`, Binary: `C:\bin\agentmap.exe`, DataDir: "/d"}
	if _, err := InstallPlan(ctx, win, (&fakeManager{}).run); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "schtasks") {
		t.Errorf("windows: %v", err)
	}
	for name, tweak := range map[string]func(*Spec){
		"relative binary":  func(s *Spec) { s.Binary = "agentmap" },
		"go run binary":    func(s *Spec) { s.Binary = filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "agentmap") },
		"percent in path":  func(s *Spec) { s.ConfigFile = "/home/u/100%.toml" },
		"dollar in path":   func(s *Spec) { s.DataDir = "/home/$USER/data" },
		"newline in path":  func(s *Spec) { s.Binary = "/bin/agent\nmap" },
		"relative datadir": func(s *Spec) { s.DataDir = "data" },
	} {
		s := tempLinuxSpec(t)
		tweak(&s)
		if _, err := InstallPlan(ctx, s, (&fakeManager{userd: "running"}).run); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestPrintShowsEverything(t *testing.T) {
	s := tempLinuxSpec(t)
	p, err := InstallPlan(context.Background(), s, (&fakeManager{userd: "running"}).run)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.Print(&out)
	unit, _ := RenderUnit(s)
	path, _ := s.File()
	for _, want := range []string{
		"would write " + path + " (mode 0644):\n-----\n" + string(unit) + "-----\n",
		"would run: systemctl --user daemon-reload\n",
		"would run: systemctl --user enable agentmap.service\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("printing the plan wrote the unit")
	}
}

// Status goes through kardianos, which asks systemctl; a fake systemctl on
// PATH plays the user manager.
func TestStatusThroughKardianos(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the systemd backend exists on Linux only")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	s := tempLinuxSpec(t)
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	ctx := context.Background()
	if got, _ := Status(ctx, s); got != "not installed" {
		t.Errorf("status before install = %q", got)
	}
	unit, _ := s.File()
	os.MkdirAll(filepath.Dir(unit), 0o700)
	os.WriteFile(unit, []byte("x"), 0o644)
	for answer, want := range map[string]string{
		"active":   "running",
		"inactive": "stopped",
		"failed":   "failed (journalctl --user -u agentmap tells why)",
	} {
		script := "#!/bin/sh\ncase \"$*\" in\n*is-system-running*) echo running;;\n*is-active*) echo " + answer +
			";;\n*list-unit-files*) echo 'agentmap.service enabled';;\nesac\n"
		if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := Status(ctx, s)
		if err != nil || got != want {
			t.Errorf("is-active %s: status = %q, %v; want %q", answer, got, err, want)
		}
	}
}

func TestInstallRefusesABinaryThatWillNotStay(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOCACHE", cache)
	t.Setenv("GOBIN", "/opt/go/bin")
	// A home that stays (only its name is used).
	home := "/home/agentmap-user"
	t.Setenv("HOME", home)
	for bin, want := range map[string]string{
		filepath.Join(cache, "1f", "exe", "agentmap"):          "in the Go build cache (" + cache + ")",
		filepath.Join(os.TempDir(), "go-build123", "agentmap"): "in a temporary directory",
		"/usr/local/bin/agentmap":                              "",
		"/usr/bin/agentmap":                                    "",
		// Not built by the go command: copied somewhere that stays.
		filepath.Join(os.TempDir(), "downloaded", "agentmap"): "in a temporary directory, which is cleaned away. Copy it to a directory that stays",
	} {
		err := Spec{Binary: bin}.stays()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: refused: %v", bin, err)
		case want != "" && (!errors.Is(err, ErrTemporaryBinary) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v", bin, err)
		case strings.Contains(bin, "go-build") && !strings.Contains(err.Error(), "go install ./cmd/agentmap && /opt/go/bin/agentmap install"):
			t.Errorf("%s: %v", bin, err)
		case strings.Contains(bin, "downloaded") && !strings.Contains(err.Error(), "&& cp "+bin+" "+filepath.Join(home, ".local", "bin", "agentmap")+" && "+filepath.Join(home, ".local", "bin", "agentmap")+" install"):
			t.Errorf("%s: %v", bin, err)
		}
	}
}

// In a home that is itself temporary (a sandbox, a test account) the
// advice must not name ~/.local/bin, which is cleaned away too (and the
// binary may already be there: cp would copy it onto itself); and a go
// install into a temporary GOBIN would be refused in turn.
func TestInstallAdviceLeavesTemporaryHomesOut(t *testing.T) {
	t.Setenv("GOCACHE", t.TempDir())
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GOBIN", filepath.Join(home, "go", "bin"))
	for _, bin := range []string{filepath.Join(home, ".local", "bin", "agentmap"), filepath.Join(os.TempDir(), "downloaded", "agentmap")} {
		err := Spec{Binary: bin}.stays()
		if !errors.Is(err, ErrTemporaryBinary) || strings.Contains(err.Error(), "cp ") || !strings.Contains(err.Error(), "so is the home directory "+home) {
			t.Errorf("%s: %v", bin, err)
		}
	}
	err := Spec{Binary: filepath.Join(os.TempDir(), "go-build123", "agentmap")}.stays()
	if !errors.Is(err, ErrTemporaryBinary) || strings.Contains(err.Error(), "go install ./cmd/agentmap &&") || !strings.Contains(err.Error(), "set GOBIN") {
		t.Errorf("go run build with a temporary GOBIN: %v", err)
	}
	// A home reached through a link into a temporary directory (macOS's
	// /var/folders is /private/var/folders) is temporary all the same.
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", link)
	if !under(filepath.Join(link, ".local", "bin", "agentmap"), home) {
		t.Errorf("%s/.local/bin is not seen under %s, where it leads", link, home)
	}
}
