package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/packaging"
)

// carryEnv gives the service the variables of this environment that move
// the agents' roots or agentmap's directories (config.ServiceEnv): a
// service starts without the shell's environment, and would otherwise
// follow other roots, or map into another data directory, than the
// agentmap run from this shell. It says what it carries, and warns of a
// value the service file cannot hold.
func carryEnv(spec *packaging.Spec, stdout, stderr io.Writer, getenv func(string) string) {
	left := spec.CarryEnv(config.ServiceEnv, getenv)
	if len(spec.Env) > 0 {
		var kv []string
		for _, k := range config.ServiceEnv {
			if v, ok := spec.Env[k]; ok {
				kv = append(kv, k+"="+v)
			}
		}
		fmt.Fprintf(stdout, "the service is given %s from this environment (install again after changing %s)\n",
			strings.Join(kv, ", "), map[bool]string{true: "it", false: "them"}[len(kv) == 1])
	}
	for _, name := range left {
		fmt.Fprintf(stderr, "agentmap install: warning: $%s is set here, but the service file cannot hold its value as it is "+
			"(%s): the service starts without it. Name the directory it points to "+
			"in the config file instead (%s) and install with --config\n", name, cannotHold(spec.GOOS), serviceEnvKey(name))
	}
}

// cannotHold says what a service file of goos cannot hold in a variable.
func cannotHold(goos string) string {
	if goos == "darwin" {
		return "a control character"
	}
	return "white space, a quote, a backslash, % or $ in a systemd unit"
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

// serviceEnvCheck compares the variables of config.ServiceEnv here with
// those the installed service is given (by its unit or LaunchAgent, else
// by systemd's user manager): where they differ, the service follows other
// roots, or writes another data directory, than agentmap run from here
// would. No check when no service is installed.
func serviceEnvCheck(getenv func(string) string) (check, bool) {
	spec, err := packaging.Current("", "")
	if err != nil {
		return check{}, false
	}
	given, installed := packaging.InstalledEnv(spec)
	if !installed {
		return check{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	manager := packaging.ManagerEnv(ctx, spec, packaging.ExecRunner)
	var differ []string
	for _, name := range config.ServiceEnv {
		here := getenv(name)
		there, ok := given[name]
		if !ok {
			there = manager[name]
		}
		if here == there {
			continue
		}
		switch {
		case there == "":
			differ = append(differ, fmt.Sprintf("$%s is %s here and not set for the service", name, here))
		case here == "":
			differ = append(differ, fmt.Sprintf("$%s is %s for the service and not set here", name, there))
		default:
			differ = append(differ, fmt.Sprintf("$%s is %s here and %s for the service", name, here, there))
		}
	}
	if len(differ) == 0 {
		return check{}, false
	}
	slices.Sort(differ)
	return check{levelWarn, "service", "the service runs in another environment than this shell, so it follows other agent roots or another data directory than agentmap here: " +
		strings.Join(differ, "; ") + ". agentmap install, run from the shell whose environment is the right one, gives the service that one"}, true
}
