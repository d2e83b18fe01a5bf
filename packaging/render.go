package packaging

import (
	_ "embed"
	"errors"
	"maps"
	"path/filepath"
	"slices"

	"github.com/kardianos/service"
)

var (
	//go:embed templates/agentmap.service
	unitTemplate string
	//go:embed templates/agentmap.plist
	plistTemplate string
)

// ServiceConfig is the kardianos description of the service: our templates
// and the per-user options. Rendering it with kardianos gives the same
// files as RenderUnit and RenderPlist.
func ServiceConfig(s Spec) *service.Config {
	return &service.Config{
		Name:             s.Name(),
		DisplayName:      "agentmap",
		Description:      description,
		Executable:       s.Binary,
		Arguments:        s.Arguments(),
		WorkingDirectory: s.DataDir,
		EnvVars:          s.Env,
		Option: service.KeyValue{
			"UserService":   true,
			"SystemdScript": unitTemplate,
			"LaunchdConfig": plistTemplate,
			"Restart":       restartPolicy,
			"ReloadSignal":  reloadSignal,
			"RunAtLoad":     true,
			"KeepAlive":     true,
			"LogDirectory":  s.DataDir,
		},
	}
}

// RenderUnit renders the systemd --user unit. The data are the values
// kardianos passes to a SystemdScript.
func RenderUnit(s Spec) ([]byte, error) {
	c := ServiceConfig(s)
	data := map[string]any{
		"Description":       c.Description,
		"Path":              c.Executable,
		"Name":              c.Name,
		"Dependencies":      c.Dependencies,
		"Arguments":         c.Arguments,
		"ChRoot":            c.ChRoot,
		"WorkingDirectory":  c.WorkingDirectory,
		"UserName":          c.UserName,
		"ReloadSignal":      reloadSignal,
		"PIDFile":           "",
		"LogDirectory":      s.DataDir,
		"OutputFileSupport": "",
		"LimitNOFILE":       "",
		"Restart":           restartPolicy,
		"SuccessExitStatus": "",
		"EnvVars":           envLines(s.Env, func(k, v string) string { return "Environment=" + k + "=" + v }),
	}
	return render(unitTemplate, data, systemdFuncs)
}

// RenderPlist renders the launchd LaunchAgent. The data are the values
// kardianos passes to a LaunchdConfig.
func RenderPlist(s Spec) ([]byte, error) {
	c := ServiceConfig(s)
	data := map[string]any{
		"Name":              c.Name,
		"Path":              c.Executable,
		"Arguments":         c.Arguments,
		"ChRoot":            c.ChRoot,
		"UserName":          c.UserName,
		"WorkingDirectory":  c.WorkingDirectory,
		"KeepAlive":         "true",
		"RunAtLoad":         "true",
		"SessionCreate":     "false",
		"StandardOutPath":   filepath.Join(s.DataDir, c.Name+".out.log"),
		"StandardErrorPath": filepath.Join(s.DataDir, c.Name+".err.log"),
		// Each entry is the variable's two lines, escaped, as kardianos
		// writes them.
		"EnvVars": envLines(s.Env, func(k, v string) string {
			esc := launchdFuncs["html"]
			return "\t\t<key>" + esc(k) + "</key>\n\t\t<string>" + esc(v) + "</string>"
		}),
	}
	return render(plistTemplate, data, launchdFuncs)
}

// Render renders the service file of the spec's OS.
func Render(s Spec) ([]byte, error) {
	switch s.GOOS {
	case "linux":
		return RenderUnit(s)
	case "darwin":
		return RenderPlist(s)
	}
	return nil, s.unsupported()
}

// PackagedUnit is the systemd user unit a distribution package installs in
// /usr/lib/systemd/user for the binary at bin: the unit `agentmap install`
// writes, for every user, so that `systemctl --user enable --now agentmap`
// works the distro way. A unit install writes in ~/.config/systemd/user
// takes precedence over it.
func PackagedUnit(bin string) ([]byte, error) {
	b, err := RenderUnit(Spec{GOOS: "linux", Binary: bin})
	if err != nil {
		return nil, err
	}
	const header = "# Written by `agentmap install`; `agentmap uninstall` removes it.\n"
	const packaged = "# Installed by the agentmap package for every user: systemctl --user enable --now agentmap\n"
	if len(b) < len(header) || string(b[:len(header)]) != header {
		return nil, errors.New("the unit template's first line changed")
	}
	return append([]byte(packaged), b[len(header):]...), nil
}

// envLines is the service file's lines for env, in the order of the names
// (kardianos's order, so that both render the same bytes); nil for none.
func envLines(env map[string]string, line func(k, v string) string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, line(k, env[k]))
	}
	return out
}
