package packaging

import (
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
