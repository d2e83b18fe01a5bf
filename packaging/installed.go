package packaging

import (
	"context"
	"html"
	"os"
	"regexp"
	"strings"
)

// InstalledConfig is the config file the installed service runs with (the
// --config of its command line in the unit or the LaunchAgent this user
// has), "" when none is named or nothing is installed. `install` run again
// without --config keeps it, and `uninstall --purge` finds the data
// directory by it: a service restarted on the default config would map
// into another data directory, and without the file's privacy.exclude.
func InstalledConfig(s Spec) string {
	path, err := s.File()
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var args []string
	if s.GOOS == "darwin" {
		args = plistArguments(string(b))
	} else {
		args = execStartArguments(string(b))
	}
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// InstalledEnv is the environment the installed service is given (the
// Environment= lines of this user's unit, else of the package's, or the
// EnvironmentVariables of the LaunchAgent), with whether a service file
// was read at all.
func InstalledEnv(s Spec) (env map[string]string, installed bool) {
	path, err := s.File()
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil && s.GOOS == "linux" {
		b, err = os.ReadFile(PackagedUnitPath)
	}
	if err != nil {
		return nil, false
	}
	env = map[string]string{}
	if s.GOOS == "darwin" {
		_, rest, ok := strings.Cut(string(b), "<key>EnvironmentVariables</key>")
		if ok {
			rest, _, _ = strings.Cut(rest, "</dict>")
			for _, m := range plistPair.FindAllStringSubmatch(rest, -1) {
				env[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
			}
		}
		return env, true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if kv, ok := strings.CutPrefix(line, "Environment="); ok {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	return env, true
}

var plistPair = regexp.MustCompile(`<key>([^<]*)</key>\s*<string>([^<]*)</string>`)

// execStartArguments reads the quoted arguments of a unit's ExecStart line,
// as the systemd template writes them ("…", with \" inside).
func execStartArguments(unit string) []string {
	for _, line := range strings.Split(unit, "\n") {
		rest, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			continue
		}
		var args []string
		for _, m := range quotedArg.FindAllStringSubmatch(rest, -1) {
			args = append(args, strings.ReplaceAll(m[1], `\"`, `"`))
		}
		return args
	}
	return nil
}

var quotedArg = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// plistArguments reads the strings of a LaunchAgent's ProgramArguments.
func plistArguments(plist string) []string {
	_, rest, ok := strings.Cut(plist, "<key>ProgramArguments</key>")
	if !ok {
		return nil
	}
	rest, _, _ = strings.Cut(rest, "</array>")
	var args []string
	for _, m := range plistString.FindAllStringSubmatch(rest, -1) {
		args = append(args, html.UnescapeString(m[1]))
	}
	return args
}

var plistString = regexp.MustCompile(`<string>([^<]*)</string>`)

// ManagerEnv is the environment systemd's user manager gives every service
// (systemctl --user show-environment: ~/.config/environment.d, set-environment),
// nil where there is none to ask (macOS, no user manager). A value systemd
// shows quoted ($'…') is left out: it cannot be compared as shown.
func ManagerEnv(ctx context.Context, s Spec, run Runner) map[string]string {
	if s.GOOS != "linux" {
		return nil
	}
	out, err := run(ctx, "systemctl", "--user", "show-environment")
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(v, "$'") {
			env[k] = v
		}
	}
	return env
}
