package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/packaging"
)

// A per-user service starts without the environment of the shell that
// installed it. The variables of config.ServiceEnv move what agentmap
// follows (an agent's root) or where it keeps its files (the XDG
// directories): without them, the service would follow the default roots,
// or write another data directory, than agentmap run from that shell.
// install gives them to the service, uninstall and doctor reckon with the
// service's own.

// serviceEnv is what install gives the service of config.ServiceEnv.
type serviceEnv struct {
	give    map[string]string // the values the service file carries
	kept    []string          // given by an earlier install, not set here: kept
	dropped []string          // given by an earlier install, set empty here: dropped
	sandbox []string          // XDG directories of a snap's or Flatpak's: not given
	left    []string          // values the service file cannot hold as they are
	// view is the environment the service will see of those variables
	// (give, over systemd's user manager's): the config, data directory
	// and roots it will use are reckoned in it.
	view map[string]string
}

// planServiceEnv works out the variables to give the service: those set
// here, paths made absolute (the service runs in another directory); else
// those an earlier install gave it (as install keeps its --config), unless
// set empty here. An XDG directory a sandbox set (the snap or Flatpak of
// the terminal install runs in, whose folders go with the sandbox's
// revision) is not given. manager is systemd's user manager's environment.
func planServiceEnv(spec *packaging.Spec, earlier, manager map[string]string, lookup func(string) (string, bool)) serviceEnv {
	var e serviceEnv
	want := map[string]string{}
	for _, name := range config.ServiceEnv {
		v, set := lookup(name)
		old, had := earlier[name]
		switch {
		case set && v == "":
			if had {
				e.dropped = append(e.dropped, name)
			}
		case set && strings.HasPrefix(name, "XDG_") && sandboxed(v, lookup):
			e.sandbox = append(e.sandbox, name)
			if had {
				want[name] = old
				e.kept = append(e.kept, name)
			}
		case set:
			want[name] = absoluteEnv(name, v)
		case had:
			want[name] = old
			e.kept = append(e.kept, name)
		}
	}
	e.left = spec.CarryEnv(config.ServiceEnv, func(k string) string { return want[k] })
	e.give = spec.Env
	e.view = map[string]string{}
	for _, name := range config.ServiceEnv {
		if v, ok := e.give[name]; ok {
			e.view[name] = v
		} else if v, ok := manager[name]; ok {
			e.view[name] = v
		}
	}
	return e
}

// sandboxed reports whether an XDG directory is a sandbox's: set in a snap
// or a Flatpak (VS Code's snap points XDG_DATA_HOME into its own revision's
// folder, which snapd removes with the revision), or lying in one's folders.
func sandboxed(dir string, lookup func(string) (string, bool)) bool {
	if v, _ := lookup("SNAP"); v != "" {
		return true
	}
	if v, _ := lookup("FLATPAK_ID"); v != "" {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return false
	}
	for _, sandbox := range []string{filepath.Join(home, "snap"), filepath.Join(home, ".var", "app")} {
		if rel, err := filepath.Rel(sandbox, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// absoluteEnv makes a variable's relative paths absolute, as they mean
// here: the service runs in its data directory. A path starting with ~
// stays (agentmap expands it as the service's); OPENCODE_DB stays as it
// is (OpenCode reads a relative one against its data directory), and so do
// the XDG directories (a relative one is ignored, by agentmap as by every
// program reading them).
func absoluteEnv(name, v string) string {
	switch name {
	case "OPENCODE_DB", "XDG_DATA_HOME", "XDG_CONFIG_HOME":
		return v
	}
	parts := []string{v}
	if name == "CLAUDE_CONFIG_DIR" {
		parts = strings.Split(v, ",") // a list
	}
	for i, p := range parts {
		t := strings.TrimSpace(p)
		if t == "" || strings.HasPrefix(t, "~") || filepath.IsAbs(t) {
			continue
		}
		if abs, err := filepath.Abs(t); err == nil {
			parts[i] = abs
		}
	}
	return strings.Join(parts, ",")
}

// applyEnv sets the process's variables of config.ServiceEnv to env (unset
// when env has none), so that the config file, data directory and roots are
// reckoned as the service will, and returns how to put them back.
func applyEnv(env map[string]string) (restore func()) {
	type saved struct {
		v   string
		set bool
	}
	before := map[string]saved{}
	for _, name := range config.ServiceEnv {
		v, set := os.LookupEnv(name)
		before[name] = saved{v, set}
		if nv, ok := env[name]; ok {
			os.Setenv(name, nv)
		} else {
			os.Unsetenv(name)
		}
	}
	return func() {
		for name, s := range before {
			if s.set {
				os.Setenv(name, s.v)
			} else {
				os.Unsetenv(name)
			}
		}
	}
}

// say tells what install gives the service, keeps, drops and leaves out.
func (e serviceEnv) say(stdout, stderr io.Writer, goos, dataDir string) {
	var given []string
	for _, k := range config.ServiceEnv {
		if v, ok := e.give[k]; ok && !slices.Contains(e.kept, k) {
			given = append(given, k+"="+v)
		}
	}
	if len(given) > 0 {
		fmt.Fprintf(stdout, "the service is given %s from this environment (install again after changing %s)\n",
			strings.Join(given, ", "), map[bool]string{true: "it", false: "them"}[len(given) == 1])
	}
	for _, k := range e.kept {
		fmt.Fprintf(stdout, "the service keeps %s=%s, given by an earlier install (%s= agentmap install drops it)\n", k, e.give[k], k)
	}
	for _, k := range e.dropped {
		fmt.Fprintf(stdout, "the service is no longer given %s (set empty here)\n", k)
	}
	for _, k := range e.sandbox {
		fmt.Fprintf(stderr, "agentmap install: warning: $%s here is a sandbox's (a snap's or a Flatpak's, which may remove it with the sandbox's revision): not given to the service, whose data directory is %s\n", k, dataDir)
	}
	for _, name := range e.left {
		fmt.Fprintf(stderr, "agentmap install: warning: $%s is set here, but the service file cannot hold its value as it is "+
			"(%s): the service starts without it. Name the directory it points to "+
			"in the config file instead (%s) and install with --config\n", name, cannotHold(goos), serviceEnvKey(name))
	}
}

// cannotHold says what a service file of goos cannot hold in a variable.
func cannotHold(goos string) string {
	if goos == "darwin" {
		return "a control character or bytes that are not UTF-8"
	}
	return "white space, a quote, a backslash, % or $ in a systemd unit, or bytes that are not UTF-8"
}

// serviceEnvKey is the config key that does what the variable does.
func serviceEnvKey(name string) string {
	switch name {
	case "CLAUDE_CONFIG_DIR":
		return "agents.claude.roots"
	case "CODEX_HOME":
		return "agents.codex.roots"
	case "COPILOT_HOME":
		return "agents.copilot.roots"
	case "GEMINI_CLI_HOME":
		return "agents.gemini.roots"
	case "OPENCODE_DB":
		return "agents.opencode.roots"
	case "XDG_DATA_HOME":
		return "data_dir, agents.opencode.roots"
	}
	return "agents.claude.roots, and --config for the config file" // XDG_CONFIG_HOME
}

// installedServiceEnv is the environment of the installed service
// (packaging.Environment), with whether one is installed.
func installedServiceEnv() (map[string]string, bool) {
	spec, err := packaging.Current("", "")
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return packaging.Environment(ctx, spec, packaging.ExecRunner)
}

// serviceEnvCheck says when the installed service follows other roots, or
// keeps another data directory, than agentmap run from here would, because
// its environment differs from this shell's in the variables of
// config.ServiceEnv: the outcomes are compared, not the strings, so that a
// config naming its roots and data_dir, which then do not depend on them,
// is not warned about. configFile is the --config given to doctor; with
// --data-dir, the data directory is doctor's to name, and not compared.
func serviceEnvCheck(here *config.Config, configFile string, dataDirGiven bool, getenv func(string) string) (check, bool) {
	env, installed := installedServiceEnv()
	if !installed {
		return check{}, false
	}
	var differ []string
	for _, name := range config.ServiceEnv {
		h, there := getenv(name), env[name]
		switch {
		case h == there:
		case there == "":
			differ = append(differ, fmt.Sprintf("$%s is %s here and not set for the service", name, h))
		case h == "":
			differ = append(differ, fmt.Sprintf("$%s is %s for the service and not set here", name, there))
		default:
			differ = append(differ, fmt.Sprintf("$%s is %s here and %s for the service", name, h, there))
		}
	}
	if len(differ) == 0 {
		return check{}, false
	}
	// The service's config, data directory and roots, reckoned in its
	// environment: the file install named on its command line, else the
	// default one there.
	restore := applyEnv(env)
	path := installedConfig()
	if path == "" && configFile == "" {
		path, _ = config.Path("")
	} else if path == "" {
		path = configFile
	}
	svc, err := config.Load(path)
	restore()
	if err != nil || svc == nil {
		return check{}, false // the service check says what is wrong with its config
	}
	var outcome []string
	if svc.DataDir != here.DataDir && !dataDirGiven {
		outcome = append(outcome, fmt.Sprintf("it keeps its data in %s, agentmap here in %s", svc.DataDir, here.DataDir))
	}
	rootsOf := func(c *config.Config) map[string][]string {
		m := map[string][]string{}
		for _, r := range daemon.RootsFromConfig(c) {
			m[r.Agent] = append(m[r.Agent], r.Dir)
		}
		return m
	}
	hr, sr := rootsOf(here), rootsOf(svc)
	for _, agent := range config.AgentNames {
		if slices.Equal(hr[agent], sr[agent]) {
			continue
		}
		outcome = append(outcome, fmt.Sprintf("it follows %s for %s, agentmap here %s", listOrNone(sr[agent]), agent, listOrNone(hr[agent])))
	}
	if len(outcome) == 0 {
		return check{}, false
	}
	slices.Sort(differ)
	return check{levelWarn, "service", "the service runs in another environment than this shell (" + strings.Join(differ, "; ") + "): " +
		strings.Join(outcome, "; ") + ". agentmap install, run from the shell whose environment is the right one, gives the service that one" +
		" (a value it cannot hold goes in the config file instead)"}, true
}

func listOrNone(dirs []string) string {
	if len(dirs) == 0 {
		return "nothing"
	}
	return strings.Join(dirs, ", ")
}
