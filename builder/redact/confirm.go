package redact

import (
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// ConfirmPR finds a PR/MR URL printed by gh/glab in a tool output and keeps
// only its identifiers. GitHub (github.com or a host containing "github")
// …/o/n/pull/N, GitLab …/o/n/-/merge_requests/N, Bitbucket
// …/o/n/pull-requests/N (Bitbucket Server …/projects/P/repos/r/pull-requests/N).
// When several appear, the last one wins: gh and glab print the URL of the
// new request last, after any warnings. The URL is rebuilt as
// scheme://host/o/n/pull/N (or the provider's equivalent): no query, no
// fragment, no credentials. For merge and close, gh's "Merged pull request
// [o/n]#N" / "Closed pull request [o/n]#N" lines confirm too. An empty
// action means create. It returns nil when nothing is confirmed.
func ConfirmPR(output string, action string) *event.PR {
	if action == "" {
		action = "create"
	}
	var found *event.PR
	for i := 0; ; {
		j := strings.Index(output[i:], "://")
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		if !schemeBefore(output, at) {
			continue
		}
		start := at - 4
		if at >= 5 && strings.EqualFold(output[at-5:at], "https") {
			start = at - 5
		}
		end := i
		for end < len(output) && !strings.ContainsRune(" \t\r\n\"'<>()[]{}`,|\\", rune(output[end])) {
			end++
		}
		if pr := prFromURL(output[start:end]); pr != nil {
			found = pr
		}
		i = end
	}
	if found == nil && (action == "merge" || action == "close") {
		found = prFromText(output)
	}
	if found != nil {
		found.Action = action
	}
	return found
}

// prFromURL recognises one PR/MR URL.
func prFromURL(u string) *event.PR {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return nil
	}
	scheme = strings.ToLower(scheme)
	hostPart, p, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
		hostPart = hostPart[at+1:]
	}
	host := Host(scheme + "://" + hostPart)
	if host == "" {
		return nil
	}
	if k := strings.IndexAny(p, "?#"); k >= 0 {
		p = p[:k]
	}
	segs := splitSegs(p)
	base := scheme + "://" + host + "/"
	for k := 2; k < len(segs); k++ {
		var provider, owner, name string
		var rel string
		switch {
		case segs[k] == "pull" && k == 2 && strings.Contains(host, "github"):
			provider, owner, name = "github", segs[0], segs[1]
			rel = owner + "/" + name + "/pull/"
		case segs[k] == "merge_requests" && segs[k-1] == "-" && k >= 3:
			provider, owner, name = "gitlab", segs[k-3], segs[k-2]
			rel = strings.Join(segs[:k-1], "/") + "/-/merge_requests/"
		case segs[k] == "pull-requests" && k == 2:
			provider, owner, name = "bitbucket", segs[0], segs[1]
			rel = owner + "/" + name + "/pull-requests/"
		case segs[k] == "pull-requests" && k == 4 && segs[0] == "projects" && segs[2] == "repos":
			provider, owner, name = "bitbucket", segs[1], segs[3]
			rel = strings.Join(segs[:4], "/") + "/pull-requests/"
		default:
			continue
		}
		if k+1 >= len(segs) || !isPlainName(owner) || !isPlainName(name) {
			return nil
		}
		for _, s := range splitSegs(rel) {
			if !isPlainName(s) {
				return nil
			}
		}
		n := leadingNumber(segs[k+1])
		if n <= 0 {
			return nil
		}
		num := strconv.Itoa(n)
		return &event.PR{Provider: provider, Repo: owner + "/" + name, Number: n, URL: base + rel + num}
	}
	return nil
}

// prFromText reads gh's "Merged pull request o/n#N" style lines.
func prFromText(out string) *event.PR {
	const marker = "pull request "
	for i := 0; ; {
		j := strings.Index(out[i:], marker)
		if j < 0 {
			return nil
		}
		i += j + len(marker)
		lead := strings.ToLower(out[max(0, i-len(marker)-10) : i-len(marker)])
		if !strings.Contains(lead, "merged") && !strings.Contains(lead, "closed") {
			continue
		}
		tok := out[i:]
		if k := strings.IndexAny(tok, " \t\r\n("); k >= 0 {
			tok = tok[:k]
		}
		repo, num, ok := strings.Cut(tok, "#")
		if !ok {
			continue
		}
		n := leadingNumber(num)
		if n <= 0 {
			continue
		}
		pr := &event.PR{Provider: "github", Number: n}
		if o, nm, ok := strings.Cut(repo, "/"); ok && isPlainName(o) && isPlainName(nm) {
			pr.Repo = repo
		}
		return pr
	}
}

// leadingNumber parses the digits at the start of s (at most 9), or -1.
func leadingNumber(s string) int {
	k := 0
	for k < len(s) && k < 10 && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == 0 || k > 9 {
		return -1
	}
	n, _ := strconv.Atoi(s[:k])
	return n
}

// ConfirmCommit finds git commit's "[branch sha] subject" line (also
// "[branch (root-commit) sha]" and "[detached HEAD sha]") and its "N files
// changed, X insertions(+), Y deletions(-)" summary in a tool output. Only
// the sha and the counts are kept: branch names and subjects are text. It
// returns nil when no commit line is found.
func ConfirmCommit(output string) *event.Commit {
	var c *event.Commit
	for rest := output; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		if c == nil {
			if sha := commitSHA(line); sha != "" {
				c = &event.Commit{SHA: sha}
			}
			continue
		}
		if files, ins, del, ok := commitStats(line); ok {
			c.Files, c.Ins, c.Del = files, ins, del
			return c
		}
		if commitSHA(line) != "" {
			break // a second commit: keep the first one as it is
		}
	}
	return c
}

// HeadSHA reads the sha of the latest commit from the output of git log
// ("commit <sha>", or "<sha> <subject>" with --oneline), git show ("commit
// <sha>") or git rev-parse HEAD ("<sha>"): the first line that starts with
// one. Only the hex id is kept.
func HeadSHA(output string) string {
	for rest := output; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		word, _, _ := strings.Cut(strings.TrimPrefix(line, "commit "), " ")
		if n := len(word); n >= 7 && n <= 64 && isHexWord(word) {
			return strings.ToLower(word)
		}
		return "" // the first line is no sha: this is not a listing of commits
	}
	return ""
}

func isHexWord(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// commitSHA returns the sha of a "[branch sha] …" line, or "".
func commitSHA(line string) string {
	line = strings.TrimLeft(line, " ")
	if !strings.HasPrefix(line, "[") {
		return ""
	}
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return ""
	}
	fields := strings.Fields(line[1:end])
	if len(fields) < 2 {
		return ""
	}
	sha := fields[len(fields)-1]
	if len(sha) < 7 || len(sha) > 40 {
		return ""
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return sha
}

// commitStats parses " 3 files changed, 10 insertions(+), 2 deletions(-)"
// (each count part optional, singular or plural).
func commitStats(line string) (files, ins, del int, ok bool) {
	line = strings.TrimSpace(line)
	parts := strings.Split(line, ", ")
	for i, part := range parts {
		num, word, found := strings.Cut(part, " ")
		n, err := strconv.Atoi(num)
		if !found || err != nil || n < 0 {
			return 0, 0, 0, false
		}
		switch {
		case i == 0 && (word == "file changed" || word == "files changed"):
			files = n
		case i > 0 && strings.HasPrefix(word, "insertion") && strings.HasSuffix(word, "(+)"):
			ins = n
		case i > 0 && strings.HasPrefix(word, "deletion") && strings.HasSuffix(word, "(-)"):
			del = n
		default:
			return 0, 0, 0, false
		}
	}
	return files, ins, del, true
}
