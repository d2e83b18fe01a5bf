package redact

import (
	"net/url"
	"path"
	"runtime"
	"strings"
)

// Paths in logs come from any OS: POSIX paths, Windows drive paths
// (C:\Users\x, c:/users/x) and UNC shares (\\server\share). They are all
// brought to one form: forward slashes, cleaned, drive letter and UNC
// server/share lower-cased. Everything else keeps its case.

// isDrivePath reports whether p starts with a Windows drive letter ("C:").
func isDrivePath(p string) bool {
	return len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0])
}

// isUNC reports whether p is a UNC path in either slash style after
// normalisation ("//server/share").
func isUNC(p string) bool {
	return len(p) > 2 && p[0] == '/' && p[1] == '/' && p[2] != '/'
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isWindowsForm reports whether a normalised path is a drive or UNC path;
// such paths compare case-insensitively.
func isWindowsForm(p string) bool { return isDrivePath(p) || isUNC(p) }

// looksWindows reports whether a raw path is written the Windows way.
func looksWindows(raw string) bool {
	return isDrivePath(raw) || strings.HasPrefix(raw, `\\`)
}

// stripFileURI turns a file:// URI (as editors write them) into a path.
func stripFileURI(p string) string {
	if len(p) < 7 || !strings.EqualFold(p[:7], "file://") {
		return p
	}
	rest := p[7:]
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	switch {
	case strings.HasPrefix(rest, "/") && isDrivePath(rest[1:]):
		return rest[1:] // file:///c:/x
	case strings.HasPrefix(rest, "/"):
		return rest // file:///home/x
	case rest == "":
		return ""
	default:
		return "//" + rest // file://server/share/x is a UNC path
	}
}

// normAbs normalises a path that is already absolute. It returns "" when
// the path is not absolute. winHint says backslashes are separators (the
// session's cwd is a Windows path).
func normAbs(p string, winHint bool) string {
	if p == "" {
		return ""
	}
	if winHint || looksWindows(p) {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	switch {
	case isDrivePath(p):
		rest := p[2:]
		if !strings.HasPrefix(rest, "/") {
			rest = "/" + rest // "C:foo" is drive-relative; treat as the drive root
		}
		return string(p[0]|0x20) + ":" + path.Clean(rest)
	case isUNC(p):
		segs := strings.SplitN(p[2:], "/", 3)
		if len(segs) < 2 || segs[0] == "" || segs[1] == "" {
			return ""
		}
		head := "//" + strings.ToLower(segs[0]) + "/" + strings.ToLower(segs[1])
		if len(segs) == 3 {
			if tail := path.Clean("/" + segs[2]); tail != "/" {
				return head + tail
			}
		}
		return head
	case strings.HasPrefix(p, "/"):
		return path.Clean(p)
	}
	return ""
}

// joinPath resolves p against the directory dir (both normalised forms).
func joinPath(dir, p string) string {
	if dir == "" {
		return ""
	}
	win := isWindowsForm(dir)
	if win {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	switch {
	case isDrivePath(dir):
		return normAbs(dir+"/"+p, true)
	case isUNC(dir):
		return normAbs(dir+"/"+p, true)
	}
	return path.Clean(dir + "/" + p)
}

// parentDir returns the parent of a normalised absolute path, or "" at a
// root ("/", "c:/", "//server/share").
func parentDir(p string) string {
	if isUNC(p) {
		if strings.Count(p[2:], "/") < 2 {
			return ""
		}
	}
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	dir := p[:i]
	switch {
	case dir == "" && p != "/":
		return "/"
	case dir == "":
		return ""
	case isDrivePath(dir) && len(dir) == 2:
		if len(p) == 3 {
			return "" // "c:/"
		}
		return dir + "/"
	}
	return dir
}

// baseName is the last segment of a normalised path.
func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	if isDrivePath(p) {
		return ""
	}
	return p
}

// underDir reports whether p is dir or lies below it. Windows forms compare
// case-insensitively. It returns the remainder ("" for dir itself).
func underDir(p, dir string) (string, bool) {
	if len(p) < len(dir) {
		return "", false
	}
	head := p[:len(dir)]
	if isWindowsForm(dir) {
		if !strings.EqualFold(head, dir) {
			return "", false
		}
	} else if head != dir {
		return "", false
	}
	if len(p) == len(dir) {
		return "", true
	}
	if strings.HasSuffix(dir, "/") {
		return p[len(dir):], true
	}
	if p[len(dir)] != '/' {
		return "", false
	}
	return p[len(dir)+1:], true
}

// localForm reports whether a normalised path can be looked up on this
// machine's file system: a Windows path on a POSIX host (or the reverse)
// is from elsewhere and must never be passed to os.Stat, where it would
// be taken as relative to the process directory.
func localForm(p string) bool {
	if runtime.GOOS == "windows" {
		return isWindowsForm(p)
	}
	return strings.HasPrefix(p, "/") && !isUNC(p)
}

// keyForm is the form of a root that its key is hashed from: Windows paths
// are case-insensitive, so they are folded.
func keyForm(root string) string {
	if isWindowsForm(root) {
		return strings.ToLower(root)
	}
	return root
}
