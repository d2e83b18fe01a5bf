package packaging

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/kardianos/service"
)

// Status describes the service for `agentmap status` and `agentmap
// doctor`: "running", "stopped", "failed", "not installed", or why it
// cannot be known.
func Status(ctx context.Context, s Spec) (string, error) {
	path, err := s.File()
	if err != nil {
		return "not supported on " + s.GOOS, nil
	}
	if _, err := os.Stat(path); err != nil {
		if s.packaged() {
			return packagedStatus(ctx, s, ExecRunner), nil
		}
		return "not installed", nil
	}
	if s.GOOS == "linux" {
		if err := userSystemd(ctx, s, ExecRunner); err != nil {
			return "installed, but systemd --user is not running", nil
		}
	}
	svc, err := kardianos(s)
	if err != nil {
		return "", err
	}
	st, err := svc.Status()
	switch {
	case err == nil && st == service.StatusRunning:
		return "running", nil
	case err == nil && st == service.StatusStopped:
		return "stopped", nil
	case errors.Is(err, service.ErrNotInstalled):
		return "not installed", nil
	case err != nil && s.GOOS == "linux" && err.Error() == "service in failed state":
		return "failed (journalctl --user -u " + UnitName + " tells why)", nil
	case err != nil:
		return "", err
	}
	return "unknown", nil
}

// packagedStatus asks systemd about the package's unit, which kardianos
// does not know (it looks for its unit in the user's directory only).
func packagedStatus(ctx context.Context, s Spec, run Runner) string {
	where := "the package's unit " + PackagedUnitPath
	if err := userSystemd(ctx, s, run); err != nil {
		return "installed (" + where + "), but systemd --user is not running"
	}
	answer := func(args ...string) string {
		out, _ := run(ctx, append([]string{"systemctl", "--user"}, args...)...)
		return firstLine(strings.TrimSpace(string(out)))
	}
	st := "stopped"
	switch answer("is-active", UnitName+".service") {
	case "active", "activating", "reloading":
		st = "running"
	case "failed":
		st = "failed (journalctl --user -u " + UnitName + " tells why)"
	}
	if en := answer("is-enabled", UnitName+".service"); en == "enabled" {
		return st + " (" + where + ", enabled)"
	}
	return st + " (" + where + ", not enabled: systemctl --user enable --now " + UnitName + " turns it on at every login)"
}

// UserManager reports whether the user's service manager can run the
// service: on Linux a running systemd --user (the error says what to do
// instead); launchd always runs on macOS.
func UserManager(ctx context.Context, s Spec) error {
	if s.GOOS == "linux" {
		return userSystemd(ctx, s, ExecRunner)
	}
	return nil
}

// kardianos returns the kardianos service of the spec. On Linux it insists
// on the systemd backend: a user unit is what agentmap installs, even where
// kardianos' detection (PID 1 is systemd) would pick another init system.
func kardianos(s Spec) (service.Service, error) {
	want := map[string]string{"linux": "linux-systemd", "darwin": "darwin-launchd"}[s.GOOS]
	if sys := service.ChosenSystem(); sys == nil || sys.String() != want {
		for _, sys := range service.AvailableSystems() {
			if sys.String() == want {
				service.ChooseSystem(detected{sys})
				break
			}
		}
	}
	return service.New(program{}, ServiceConfig(s))
}

// detected makes kardianos use a backend its own detection rejected.
type detected struct{ service.System }

func (detected) Detect() bool { return true }

// program satisfies kardianos' Interface; agentmap never runs under
// kardianos' Run, the daemon is `agentmap run`.
type program struct{}

func (program) Start(service.Service) error { return nil }
func (program) Stop(service.Service) error  { return nil }
