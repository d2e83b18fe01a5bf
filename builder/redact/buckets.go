package redact

import "strings"

// Bucket labels for paths outside any repo, exactly as the format page
// lists them.
const (
	LabelScratch   = "/tmp (scratch)"
	LabelDocuments = "~/Documents"
	LabelDownloads = "~/Downloads"
	LabelDesktop   = "~/Desktop"
	LabelClaude    = "~/.claude"
	LabelHome      = "~ (home)"
	LabelOutside   = "outside-repo"
)

// splitHome finds the home directory in a normalised absolute path from the
// path's own shape (logs come from other machines, so the local $HOME says
// nothing): /home/<u>, /Users/<u>, /root, <drive>:/Users/<u> and the WSL
// view of it, /mnt/<drive>/Users/<u>. It returns the home and the segments
// below it.
func splitHome(p string) (home string, rest []string, ok bool) {
	var segs []string
	prefix := ""
	switch {
	case isDrivePath(p):
		prefix = p[:2]
		segs = splitSegs(p[2:])
	case strings.HasPrefix(p, "/") && !isUNC(p):
		segs = splitSegs(p)
	default:
		return "", nil, false
	}
	n := 0
	switch {
	case prefix == "" && len(segs) >= 1 && segs[0] == "root":
		n = 1
	case prefix == "" && len(segs) >= 2 && (segs[0] == "home" || segs[0] == "Users") && segs[1] != "Shared":
		n = 2
	case prefix == "" && len(segs) >= 4 && segs[0] == "mnt" && len(segs[1]) == 1 &&
		strings.EqualFold(segs[2], "users") && isUserDir(segs[3]):
		n = 4
	case prefix != "" && len(segs) >= 2 && strings.EqualFold(segs[0], "users") && isUserDir(segs[1]):
		n = 2
	default:
		return "", nil, false
	}
	return prefix + "/" + strings.Join(segs[:n], "/"), segs[n:], true
}

// isUserDir excludes the shared profiles under Windows' Users folder.
func isUserDir(s string) bool {
	switch strings.ToLower(s) {
	case "public", "default", "default user", "all users":
		return false
	}
	return true
}

func splitSegs(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// isScratch reports whether a normalised absolute path is a temporary
// directory: /tmp, /private/tmp, /var/tmp, /dev/shm, macOS /var/folders,
// Windows %TEMP% (AppData/Local/Temp) and <drive>:/Windows/Temp.
func isScratch(p string) bool {
	if isDrivePath(p) {
		segs := splitSegs(p[2:])
		if len(segs) >= 2 && strings.EqualFold(segs[0], "windows") && strings.EqualFold(segs[1], "temp") {
			return true
		}
		_, rest, ok := splitHome(p)
		return ok && isTempUnderHome(rest)
	}
	for _, d := range scratchDirs {
		if _, ok := underDir(p, d); ok {
			return true
		}
	}
	if _, rest, ok := splitHome(p); ok {
		return isTempUnderHome(rest)
	}
	return false
}

var scratchDirs = []string{
	"/tmp", "/private/tmp", "/var/tmp", "/private/var/tmp", "/dev/shm",
	"/var/folders", "/private/var/folders",
}

func isTempUnderHome(rest []string) bool {
	return len(rest) >= 3 && strings.EqualFold(rest[0], "appdata") &&
		strings.EqualFold(rest[1], "local") && strings.EqualFold(rest[2], "temp")
}

// Bucket returns the label of a normalised absolute path outside any repo.
func Bucket(p string) string {
	if isScratch(p) {
		return LabelScratch
	}
	_, rest, ok := splitHome(p)
	if !ok {
		return LabelOutside
	}
	if len(rest) == 0 {
		return LabelHome
	}
	switch {
	case strings.EqualFold(rest[0], "Documents"):
		return LabelDocuments
	case strings.EqualFold(rest[0], "Downloads"):
		return LabelDownloads
	case strings.EqualFold(rest[0], "Desktop"):
		return LabelDesktop
	case strings.EqualFold(rest[0], ".claude"):
		if len(rest) >= 2 && isPlainName(rest[1]) {
			return LabelClaude + "/" + rest[1]
		}
		return LabelClaude
	}
	return LabelHome
}

// isPlainName accepts a short file or directory name made of safe
// characters; anything else is not echoed into a label.
func isPlainName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isBucketBase reports whether a directory is too general to be taken as a
// project root when it does not exist here: a file-system or drive root, a
// top-level system directory, a home directory or the folders under it
// that have their own labels, the agent's config area, and temp roots.
func isBucketBase(p string) bool {
	if p == "/" || parentDir(p) == "" {
		return true
	}
	var segs []string
	if isDrivePath(p) {
		segs = splitSegs(p[2:])
		if len(segs) == 1 {
			switch strings.ToLower(segs[0]) {
			case "users", "windows", "program files", "program files (x86)", "programdata", "temp":
				return true
			}
		}
	} else if !isUNC(p) {
		segs = splitSegs(p)
		if len(segs) == 1 && systemTop[segs[0]] {
			return true
		}
		if len(segs) == 2 && (segs[0] == "private" || segs[0] == "mnt") {
			return true
		}
	}
	for _, d := range scratchDirs {
		if p == d {
			return true
		}
		if rest, ok := underDir(p, d); ok && strings.HasSuffix(d, "folders") && strings.Count(rest, "/") < 3 {
			return true // /var/folders/xx/yyyy/T itself
		}
	}
	_, rest, ok := splitHome(p)
	if !ok {
		return false
	}
	switch {
	case len(rest) == 0:
		return true
	case strings.EqualFold(rest[0], ".claude"):
		return true
	case len(rest) == 1 && (strings.EqualFold(rest[0], "Documents") || strings.EqualFold(rest[0], "Downloads") ||
		strings.EqualFold(rest[0], "Desktop") || strings.EqualFold(rest[0], "AppData")):
		return true
	case isTempUnderHome(rest) && len(rest) == 3:
		return true
	}
	return false
}

var systemTop = map[string]bool{
	"home": true, "Users": true, "var": true, "usr": true, "etc": true, "opt": true,
	"private": true, "Volumes": true, "mnt": true, "media": true, "srv": true, "tmp": true,
	"proc": true, "sys": true, "dev": true, "bin": true, "sbin": true, "lib": true, "lib64": true,
	"boot": true, "run": true, "nix": true, "snap": true, "System": true, "Library": true,
	"Applications": true, "cygdrive": true, "root": true,
}
