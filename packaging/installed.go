package packaging

import (
	"context"
	"html"
	"os"
	"regexp"
	"strconv"
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

// Environment is the environment the installed service runs with, as far
// as agentmap's variables go: systemd's user manager's (systemctl --user
// show-environment: ~/.config/environment.d, set-environment) under the
// unit's own Environment= lines and its drop-ins (systemctl --user show
// agentmap.service), else, without a user manager to ask, the lines of the
// unit file (InstalledEnv); on macOS the LaunchAgent's. installed is false
// when no service is installed.
func Environment(ctx context.Context, s Spec, run Runner) (env map[string]string, installed bool) {
	fromFile, installed := InstalledEnv(s)
	if !installed || s.GOOS != "linux" {
		return fromFile, installed
	}
	manager := ManagerEnv(ctx, s, run)
	if manager == nil {
		return fromFile, true
	}
	unit, err := run(ctx, "systemctl", "--user", "show", UnitName+".service", "--property=Environment", "--value")
	if err != nil {
		return fromFile, true
	}
	env = manager
	for _, kv := range splitAssignments(strings.TrimSpace(string(unit))) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, true
}

// ManagerEnv is the environment systemd's user manager gives every service
// (systemctl --user show-environment: ~/.config/environment.d,
// set-environment), nil where there is none to ask (macOS, no user
// manager).
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
		if k, v, ok := strings.Cut(line, "="); ok {
			if v, ok := unquoteDollar(v); ok {
				env[k] = v
			}
		}
	}
	return env
}

// unquoteDollar reads a value as systemctl show-environment prints it:
// plain, or $'…' with C escapes when it holds characters a shell would
// read otherwise (spaces, quotes, &, ;). ok is false for an escape it does
// not know.
func unquoteDollar(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "$'")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "'")
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i++; i >= len(inner) {
			return "", false
		}
		switch e := inner[i]; e {
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			if i+2 >= len(inner) {
				return "", false
			}
			n, err := strconv.ParseUint(inner[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

// splitAssignments splits systemctl show's Environment value into its
// assignments: separated by spaces, each plain or in double quotes with
// backslash escapes.
func splitAssignments(v string) []string {
	var out []string
	var b strings.Builder
	inQuote, any := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
			any = true
		case c == '"':
			inQuote, any = !inQuote, true
		case c == ' ' && !inQuote:
			if any {
				out = append(out, b.String())
			}
			b.Reset()
			any = false
		default:
			b.WriteByte(c)
			any = true
		}
	}
	if any {
		out = append(out, b.String())
	}
	return out
}
