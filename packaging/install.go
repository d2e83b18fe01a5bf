package packaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoUserSystemd means the user has no running systemd --user manager, so
// a user unit would never start. Its message says what to do instead.
var ErrNoUserSystemd = errors.New("systemd --user is not running for this user")

// InstallPlan computes how to install (or bring up to date) the service.
// Installing twice is harmless: an unchanged file is not rewritten, and the
// commands only make sure the service is enabled and running. On Linux
// without a user manager it returns the plan with an error wrapping
// ErrNoUserSystemd that explains the alternatives.
func InstallPlan(ctx context.Context, s Spec, run Runner) (*Plan, error) {
	path, err := s.File()
	if err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	// The plan of a binary that will not stay is still shown (--dry-run),
	// with the refusal.
	refusal := s.stays()
	content, err := Render(s)
	if err != nil {
		return nil, err
	}
	old, readErr := os.ReadFile(path)
	changed := readErr != nil || !bytes.Equal(old, content)
	p := &Plan{}
	switch s.GOOS {
	case "linux":
		if changed {
			p.mkdir(filepath.Dir(path))
			p.write(path, 0o644, content)
			p.run("systemctl", "--user", "daemon-reload")
		}
		p.run("systemctl", "--user", "enable", UnitName+".service")
		if changed && readErr == nil {
			// A running service picks up a changed unit only on restart.
			p.run("systemctl", "--user", "restart", UnitName+".service")
		} else {
			p.run("systemctl", "--user", "start", UnitName+".service")
		}
		if !changed {
			p.Notes = append(p.Notes, path+" is up to date")
		}
		if err := userSystemd(ctx, s, run); err != nil {
			return p, errors.Join(refusal, err)
		}
		if out, err := run(ctx, "loginctl", "show-user", strconv.Itoa(s.UID), "--property=Linger", "--value"); err == nil &&
			strings.TrimSpace(string(out)) == "no" {
			p.Notes = append(p.Notes, "systemd stops your user services when you log out; "+
				"to keep agentmap running: sudo loginctl enable-linger "+userName())
		}
	case "darwin":
		loaded := launchdLoaded(ctx, s, run)
		p.mkdir(s.DataDir) // launchd opens the log files but creates no directory
		if changed {
			p.mkdir(filepath.Dir(path))
			p.write(path, 0o644, content)
			if loaded {
				p.run("launchctl", "bootout", s.target())
			}
		}
		p.run("launchctl", "enable", s.target())
		if changed || !loaded {
			p.Steps = append(p.Steps, Step{Op: Run, Args: []string{"launchctl", "bootstrap", s.domain(), path}, Retry: loaded})
		} else {
			p.Notes = append(p.Notes, path+" is up to date and loaded")
		}
	}
	return p, refusal
}

// UninstallPlan computes how to stop and remove the service. The data
// directory is removed only with purge.
func UninstallPlan(ctx context.Context, s Spec, purge bool) (*Plan, error) {
	return uninstallPlan(ctx, s, purge, ExecRunner)
}

func uninstallPlan(ctx context.Context, s Spec, purge bool, run Runner) (*Plan, error) {
	p := &Plan{}
	path, err := s.File()
	if err != nil && !purge {
		return nil, err
	}
	installed := false
	if path != "" {
		_, statErr := os.Stat(path)
		installed = statErr == nil
	}
	switch s.GOOS {
	case "linux":
		if installed {
			manager := userSystemd(ctx, s, run) == nil
			if manager {
				p.runMayFail("systemctl", "--user", "disable", "--now", UnitName+".service")
			}
			p.Steps = append(p.Steps, Step{Op: Remove, Path: path})
			// Without a manager to disable it, the enable link is removed by
			// hand so that nothing dangles.
			wants := filepath.Join(filepath.Dir(path), "default.target.wants", UnitName+".service")
			if _, err := os.Lstat(wants); err == nil && !manager {
				p.Steps = append(p.Steps, Step{Op: Remove, Path: wants})
			}
			if manager {
				p.runMayFail("systemctl", "--user", "daemon-reload")
				p.runMayFail("systemctl", "--user", "reset-failed", UnitName+".service")
			}
		}
	case "darwin":
		if launchdLoaded(ctx, s, run) {
			p.run("launchctl", "bootout", s.target())
		}
		if installed {
			p.Steps = append(p.Steps, Step{Op: Remove, Path: path})
		}
	}
	switch {
	case !installed && s.packaged():
		// The package's unit stays (it is the package's to remove); this
		// user's enablement of it goes.
		if userSystemd(ctx, s, run) == nil {
			p.runMayFail("systemctl", "--user", "disable", "--now", UnitName+".service")
		}
		p.Notes = append(p.Notes, "the service is the package's unit "+PackagedUnitPath+
			": it is turned off for you; removing the package (apt remove agentmap) removes the unit")
	case path != "" && !installed:
		p.Notes = append(p.Notes, "the service is not installed ("+path+" does not exist)")
	}
	if purge && s.DataDir != "" {
		if _, err := os.Stat(s.DataDir); err == nil {
			p.Steps = append(p.Steps, Step{Op: Purge, Path: s.DataDir, Keep: s.ConfigFile})
		}
		switch s.GOOS {
		case "linux":
			p.Notes = append(p.Notes, "the service's log is in your systemd journal, which agentmap does not edit: "+
				"journald ages it out (journalctl --user -u "+UnitName+" shows it)")
		case "darwin":
			p.Notes = append(p.Notes, "the service's log files were in "+s.DataDir+" and go with it")
		}
	} else if s.DataDir != "" {
		p.Notes = append(p.Notes, "the data directory "+s.DataDir+" is kept (uninstall --purge removes it)")
	}
	return p, nil
}

// Actions of ControlPlan.
const (
	Start   = "start"
	Stop    = "stop"
	Restart = "restart"
)

// ControlPlan computes how to start, stop or restart the installed service.
func ControlPlan(ctx context.Context, s Spec, action string, run Runner) (*Plan, error) {
	path, err := s.File()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil && !s.packaged() {
		return nil, fmt.Errorf("the service is not installed (no %s): run `agentmap install` first", path)
	}
	p := &Plan{}
	switch s.GOOS {
	case "linux":
		if err := userSystemd(ctx, s, run); err != nil {
			return nil, err
		}
		p.run("systemctl", "--user", action, UnitName+".service")
	case "darwin":
		loaded := launchdLoaded(ctx, s, run)
		switch {
		case action == Stop && loaded:
			p.run("launchctl", "bootout", s.target())
		case action == Stop:
			p.Notes = append(p.Notes, "the service is not running")
		case loaded && action == Restart:
			p.run("launchctl", "kickstart", "-k", s.target())
		case loaded:
			p.run("launchctl", "kickstart", s.target())
		default:
			p.run("launchctl", "bootstrap", s.domain(), path)
		}
	}
	return p, nil
}

// domain is the launchd domain of the user's GUI session.
func (s Spec) domain() string { return "gui/" + strconv.Itoa(s.UID) }

// target is the launchd service target of the job.
func (s Spec) target() string { return s.domain() + "/" + LaunchdLabel }

func launchdLoaded(ctx context.Context, s Spec, run Runner) bool {
	_, err := run(ctx, "launchctl", "print", s.target())
	return err == nil
}

// userSystemd checks that the user's systemd manager is running: its
// runtime directory exists and it answers is-system-running ("degraded"
// still runs services, and exits non-zero, so the answer is read).
func userSystemd(ctx context.Context, s Spec, run Runner) error {
	var why string
	if s.RuntimeDir == "" {
		why = "$XDG_RUNTIME_DIR is not set"
	} else if st, err := os.Stat(filepath.Join(s.RuntimeDir, "systemd")); err != nil || !st.IsDir() {
		why = "there is no " + filepath.Join(s.RuntimeDir, "systemd")
	} else {
		out, err := run(ctx, "systemctl", "--user", "is-system-running")
		state := strings.TrimSpace(string(out))
		switch {
		case strings.HasPrefix(state, "running"), strings.HasPrefix(state, "degraded"),
			strings.HasPrefix(state, "starting"), strings.HasPrefix(state, "initializing"):
			return nil
		case err != nil && state == "":
			why = "`systemctl --user is-system-running` failed (" + err.Error() + ")"
		default:
			why = "`systemctl --user is-system-running` answered " + strconv.Quote(firstLine(state))
		}
	}
	name := userName()
	return fmt.Errorf(`%w (%s), so a user unit would never start. Either:
  - log in with a normal session (desktop or ssh) so that systemd starts your user manager,
    and let it run while you are logged out: sudo loginctl enable-linger %s
    then run agentmap install again; or
  - run %s under the supervisor you already use (a container init, supervisord, runit, tmux)`,
		ErrNoUserSystemd, why, name, shellJoin(append([]string{s.Binary}, s.Arguments()...)))
}

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "$USER"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
