package validate

import (
	"net"
	"regexp"
	"strings"
)

var (
	dirsOnlyName = regexp.MustCompile(`^•[0-9a-f]{6}$`)
	hashedSeg    = regexp.MustCompile(`^[0-9a-f]{10}$`)
	remoteShape  = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$`)
	hostLabel    = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// paths checks files[].path against session.pathMode, and the shape of
// remotes and hosts.
func (c *checker) paths(top map[string]any) {
	mode, _ := str(object(top["session"])["pathMode"])
	for i, v := range array(top["files"]) {
		p, ok := str(object(v)["path"])
		if !ok {
			continue
		}
		at := ptr("files", i, "path")
		if why := relativeProblem(p); why != "" {
			c.add(at, RuleRelativePath, "%s %s", describe(p), why)
			continue
		}
		if p == "." {
			continue // the repo root itself: nothing to hide
		}
		segs := strings.Split(p, "/")
		switch mode {
		case "dirs_only":
			if !dirsOnlyName.MatchString(segs[len(segs)-1]) {
				c.add(at, RuleDirsOnly, "the file name is not •<6 hex digits>")
			}
		case "hashed":
			for j, s := range segs {
				if !hashedSeg.MatchString(s) {
					c.add(at, RuleHashed, "segment %d is not 10 hex digits", j+1)
					break
				}
			}
		}
	}

	for i, v := range array(top["repos"]) {
		if r, ok := str(object(v)["remote"]); ok {
			c.remote(ptr("repos", i, "remote"), r)
		}
	}
	for i, v := range array(top["prs"]) {
		if r, ok := str(object(v)["repo"]); ok {
			c.remote(ptr("prs", i, "repo"), r)
		}
	}
	for i, v := range c.events {
		ev := object(v)
		switch ev["kind"] {
		case "pr_merge", "pr_close", "pr_comment":
			if r, ok := str(ev["repo"]); ok {
				c.remote(ptr("events", i, "repo"), r)
			}
		case "web":
			if h, ok := str(ev["host"]); ok && !isHost(h) {
				c.add(ptr("events", i, "host"), RuleHost, "%s is not a host name", describe(h))
			}
		}
		if r, ok := str(object(ev["vcs"])["repo"]); ok {
			c.remote(ptr("events", i, "vcs", "repo"), r)
		}
	}
}

// relativeProblem says why p is not a clean repo-relative path, or "".
func relativeProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.Contains(p, `\`):
		return "uses backslashes"
	case windowsDrive.MatchString(p):
		return "has a drive"
	case strings.HasPrefix(p, "~"):
		return "is a home path"
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return "leaves the repo with .."
		}
	}
	return ""
}

func (c *checker) remote(at, r string) {
	if !remoteShape.MatchString(r) {
		c.add(at, RuleRemote, "%s is not owner/name", describe(r))
		return
	}
	owner := r[:strings.IndexByte(r, '/')]
	if strings.Contains(owner, ".") {
		c.add(at, RuleRemote, "starts with a host, want owner/name")
	}
}

// isHost accepts a lower-case DNS name, an IP address, or "search".
func isHost(h string) bool {
	if h == "search" {
		return true
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}
