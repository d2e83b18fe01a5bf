package redact

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func mkfile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempRoot returns a temp directory in the slash form the resolver uses.
func tempRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(d)
}

func TestPathsGitRepo(t *testing.T) {
	tmp := tempRoot(t)
	root := tmp + "/proj"
	mkfile(t, root+"/.git/HEAD", "ref: refs/heads/main\n")
	mkfile(t, root+"/.git/config", "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = git@github.com:other/fork.git\n[remote \"origin\"]\n\turl = git@github.com:acme/api.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	mkfile(t, root+"/sub/a.go", "package a\n")
	mkfile(t, tmp+"/loose/notes.txt", "x")

	p := NewPaths()
	p.SetCWD(root + "/sub")
	key := repoKey(root)
	if got := p.CWDRepo(); got != key {
		t.Fatalf("CWDRepo = %q, want %q", got, key)
	}
	want := []event.Repo{{Key: key, Name: "proj", Remote: "acme/api"}}
	if got := p.NewRepos(); !reflect.DeepEqual(got, want) {
		t.Fatalf("NewRepos = %+v, want %+v", got, want)
	}
	tests := []struct {
		in   string
		want event.Target
	}{
		{"a.go", event.Target{Repo: key, Path: "sub/a.go", Touch: "read"}},
		{"../new/file.go", event.Target{Repo: key, Path: "new/file.go", Touch: "read"}},
		{root + "/sub/a.go", event.Target{Repo: key, Path: "sub/a.go", Touch: "read"}},
		{root + "/deleted.go", event.Target{Repo: key, Path: "deleted.go", Touch: "read"}},
		{root, event.Target{Repo: key, Path: ".", Touch: "read"}},
		{"..", event.Target{Repo: key, Path: ".", Touch: "read"}},
		{root + "/.git/config", event.Target{Repo: key, Path: ".git/config", Touch: "read"}},
		{"file://" + root + "/sub/a.go", event.Target{Repo: key, Path: "sub/a.go", Touch: "read"}},
		{tmp + "/loose/notes.txt", event.Target{Label: Bucket(tmp + "/loose/notes.txt"), Touch: "read"}},
	}
	for _, tt := range tests {
		if got := p.Target(tt.in, "read", ""); got != tt.want {
			t.Errorf("Target(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if got := p.NewRepos(); len(got) != 0 {
		t.Errorf("NewRepos again = %+v, want none", got)
	}
	// A directory removed since the log was written still belongs to the repo.
	p.SetCWD(root + "/gone/deeper")
	if p.CWDRepo() != key {
		t.Errorf("removed cwd in a repo: CWDRepo = %q, want %q", p.CWDRepo(), key)
	}
	if got := p.Target("x.go", "read", ""); got.Repo != key || got.Path != "gone/deeper/x.go" {
		t.Errorf("target under removed cwd = %+v", got)
	}
	if got := p.NewRepos(); len(got) != 0 {
		t.Errorf("NewRepos after removed cwd = %+v, want none", got)
	}
}

func TestPathsWorktreeAndSubmodule(t *testing.T) {
	tmp := tempRoot(t)
	mkfile(t, tmp+"/main/.git/config", "[remote \"origin\"]\n\turl = https://bot:s3cret@gitlab.com/grp/sub/tool.git\n")
	mkfile(t, tmp+"/main/.git/worktrees/wt/commondir", "../..\n")
	mkfile(t, tmp+"/main/.git/worktrees/wt/HEAD", "ref: refs/heads/feature\n")
	mkfile(t, tmp+"/wt/.git", "gitdir: "+tmp+"/main/.git/worktrees/wt\n")
	mkfile(t, tmp+"/wt/f.go", "x")
	mkfile(t, tmp+"/main/.git/modules/lib/config", "[remote \"origin\"]\n\turl = ssh://git@github.com:22/acme/lib\n")
	mkfile(t, tmp+"/main/lib/.git", "gitdir: ../.git/modules/lib\n")
	mkfile(t, tmp+"/main/lib/x.c", "x")

	p := NewPaths()
	p.SetCWD(tmp + "/wt")
	got := p.Target("f.go", "edit", "modify")
	if got.Repo != repoKey(tmp+"/wt") || got.Path != "f.go" || got.Op != "modify" {
		t.Errorf("worktree target = %+v", got)
	}
	sub := p.Target(tmp+"/main/lib/x.c", "read", "")
	if sub.Repo != repoKey(tmp+"/main/lib") || sub.Path != "x.c" {
		t.Errorf("submodule target = %+v", sub)
	}
	want := []event.Repo{
		{Key: repoKey(tmp + "/wt"), Name: "main", Remote: "sub/tool"},
		{Key: repoKey(tmp + "/main/lib"), Name: "lib", Remote: "acme/lib"},
	}
	if got := p.NewRepos(); !reflect.DeepEqual(got, want) {
		t.Errorf("NewRepos = %+v, want %+v", got, want)
	}
}

func TestPathsRecordedElsewhere(t *testing.T) {
	p := NewPaths()
	step := func(cwd string) {
		if cwd != "" {
			p.SetCWD(cwd)
		}
	}
	proj := "/Users/zz-agentmap-test/proj"
	step(proj)
	if p.CWDRepo() != repoKey(proj) {
		t.Fatalf("a missing cwd must become a root")
	}
	step(proj + "/pkg/sub")
	if p.CWDRepo() != repoKey(proj) {
		t.Fatalf("a cwd under a known root must use it")
	}
	tests := []struct {
		cwd, in string
		want    event.Target
	}{
		{"", "main.go", event.Target{Repo: repoKey(proj), Path: "pkg/sub/main.go"}},
		{"", "../../README.md", event.Target{Repo: repoKey(proj), Path: "README.md"}},
		{"", "../../..", event.Target{Label: LabelHome}},
		{"", "/Users/zz-agentmap-test/Documents/plan.pdf", event.Target{Label: LabelDocuments}},
		{"", "~/Downloads/a.zip", event.Target{Label: LabelDownloads}},
		{"", "~/.claude/skills/x/SKILL.md", event.Target{Label: "~/.claude/skills"}},
		{"", "/tmp/scratch.txt", event.Target{Label: LabelScratch}},
		{"/Users/zz-agentmap-test/other", "x.py", event.Target{Repo: repoKey("/Users/zz-agentmap-test/other"), Path: "x.py"}},
		{"", proj + "/a/b.ts", event.Target{Repo: repoKey(proj), Path: "a/b.ts"}},
		{"/Users/zz-agentmap-test", "notes.txt", event.Target{Label: LabelHome}},
		{"/Users/zz-agentmap-test/.claude", "settings.json", event.Target{Label: "~/.claude/settings.json"}},
		{"", "/etc/hosts", event.Target{Label: LabelOutside}},
	}
	for _, tt := range tests {
		step(tt.cwd)
		got := p.Target(tt.in, "", "")
		if got != tt.want {
			t.Errorf("cwd %q Target(%q) = %+v, want %+v", tt.cwd, tt.in, got, tt.want)
		}
	}
	if p.CWDRepo() != "" {
		t.Errorf("~/.claude must not become a repo")
	}
	repos := p.NewRepos()
	if len(repos) != 2 || repos[0].Name != "proj" || repos[1].Name != "other" || repos[0].Remote != "" {
		t.Errorf("NewRepos = %+v", repos)
	}
}

// A root seen later that is a parent of an earlier one: paths under the
// earlier root keep it (the longest root wins), others take the new one.
func TestPathsLongestRoot(t *testing.T) {
	p := NewPaths()
	p.SetCWD("/home/zz-agentmap-test/work/app/web")
	p.SetCWD("/home/zz-agentmap-test/work/app")
	a := p.Target("/home/zz-agentmap-test/work/app/web/x.js", "", "")
	b := p.Target("/home/zz-agentmap-test/work/app/api/y.go", "", "")
	if a.Repo != repoKey("/home/zz-agentmap-test/work/app/web") || a.Path != "x.js" {
		t.Errorf("a = %+v", a)
	}
	if b.Repo != repoKey("/home/zz-agentmap-test/work/app") || b.Path != "api/y.go" {
		t.Errorf("b = %+v", b)
	}
}

func TestPathsWindows(t *testing.T) {
	p := NewPaths()
	p.SetCWD(`C:\Users\Dev\proj`)
	key := repoKey("c:/Users/Dev/proj")
	if p.CWDRepo() != key || repoKey("c:/users/dev/proj") != key {
		t.Fatalf("windows root key mismatch")
	}
	tests := []struct {
		in   string
		want event.Target
	}{
		{`c:\users\dev\proj\src\a.go`, event.Target{Repo: key, Path: "src/a.go"}},
		{`src\b.go`, event.Target{Repo: key, Path: "src/b.go"}},
		{`C:/Users/Dev/proj/c.go`, event.Target{Repo: key, Path: "c.go"}},
		{`C:\Users\Dev\AppData\Local\Temp\x.txt`, event.Target{Label: LabelScratch}},
		{`C:\Users\Dev\Desktop\a.png`, event.Target{Label: LabelDesktop}},
		{`C:\Users\Dev\.claude\projects\x.jsonl`, event.Target{Label: "~/.claude/projects"}},
		{`C:\Users\Dev\ntuser.dat`, event.Target{Label: LabelHome}},
		{`\\fileserver\share\doc.txt`, event.Target{Label: LabelOutside}},
		{`\\fileserver`, event.Target{Label: LabelOutside}},
		{`D:\data\x.csv`, event.Target{Label: LabelOutside}},
		{"file:///c%3A/Users/Dev/proj/d.go", event.Target{Repo: key, Path: "d.go"}},
	}
	for _, tt := range tests {
		if got := p.Target(tt.in, "", ""); got != tt.want {
			t.Errorf("Target(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if r := p.NewRepos(); len(r) != 1 || r[0].Name != "proj" {
		t.Errorf("NewRepos = %+v", r)
	}
}

func TestPathsNoCWD(t *testing.T) {
	p := NewPaths()
	tests := map[string]string{
		"src/a.go":             LabelOutside,
		"":                     LabelOutside,
		"/home/u/Desktop/x":    LabelDesktop,
		"~/Documents/a":        LabelDocuments,
		"/private/tmp/x":       LabelScratch,
		"/var/folders/x/y/T/z": LabelScratch,
		"bad\x00path":          LabelOutside,
		`\\server`:             LabelOutside,
	}
	for in, want := range tests {
		if got := p.Target(in, "hit", ""); got.Label != want || got.Repo != "" || got.Touch != "hit" {
			t.Errorf("Target(%q) = %+v, want label %q", in, got, want)
		}
	}
}

func TestBucket(t *testing.T) {
	tests := map[string]string{
		"/tmp":                                    LabelScratch,
		"/tmp/x/y":                                LabelScratch,
		"/private/tmp/a":                          LabelScratch,
		"/var/tmp/a":                              LabelScratch,
		"/var/folders/ab/cd1234/T/tmp.x":          LabelScratch,
		"/dev/shm/q":                              LabelScratch,
		"c:/Users/u/AppData/Local/Temp/x":         LabelScratch,
		"c:/Windows/Temp/y":                       LabelScratch,
		"/home/u":                                 LabelHome,
		"/home/u/.bashrc":                         LabelHome,
		"/home/u/Documents/a/b":                   LabelDocuments,
		"/Users/u/Downloads/b.dmg":                LabelDownloads,
		"/root/Desktop/c":                         LabelDesktop,
		"/home/u/.claude":                         LabelClaude,
		"/home/u/.claude/projects/-x/s.jsonl":     "~/.claude/projects",
		"/home/u/.claude/skills/s/SKILL.md":       "~/.claude/skills",
		"/home/u/.claude/we!rd/x":                 LabelClaude,
		"/mnt/c/Users/u/Documents/x":              LabelDocuments,
		"c:/Users/u/Documents/x":                  LabelDocuments,
		"c:/Users/Public/x":                       LabelOutside,
		"/Users/Shared/x":                         LabelOutside,
		"/etc/hosts":                              LabelOutside,
		"/":                                       LabelOutside,
		"//server/share/x":                        LabelOutside,
		"/home/u/.config/agentmap/config.toml":    LabelHome,
		"/home/u/AppData/Local/Temp/not-windows":  LabelScratch,
		"/workspace/project/src/main.go":          LabelOutside,
		"/home/u/Documents-old/x":                 LabelHome,
		"/private/var/folders/zz/abc/T/file.json": LabelScratch,
	}
	for in, want := range tests {
		if got := Bucket(in); got != want {
			t.Errorf("Bucket(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeRemote(t *testing.T) {
	tests := map[string]string{
		"git@github.com:acme/api.git":                             "acme/api",
		"git@github.com:acme/api":                                 "acme/api",
		"https://github.com/acme/api.git":                         "acme/api",
		"https://x-access-token:ghp_SECRET@github.com/acme/api":   "acme/api",
		"https://user@bitbucket.org/team/repo.git/":               "team/repo",
		"ssh://git@github.com:22/acme/api.git":                    "acme/api",
		"ssh://git@host/~user/proj.git":                           "",
		"git://example.org/a/b":                                   "a/b",
		"https://gitlab.com/group/subgroup/name.git":              "subgroup/name",
		"https://dev.azure.com/org/project/_git/repo":             "project/repo",
		"git@ssh.dev.azure.com:v3/org/project/repo":               "project/repo",
		"/srv/git/repo.git":                                       "",
		"../upstream":                                             "",
		"file:///srv/git/a/b.git":                                 "",
		`C:\repos\x.git`:                                          "",
		"":                                                        "",
		"https://github.com/acme":                                 "",
		"https://github.com/ac me/api":                            "",
		"  git@github.com:acme/api.git  ":                         "acme/api",
		"https://github.example.com:8443/acme/tools.git?x=1#frag": "",
	}
	for in, want := range tests {
		if got := NormalizeRemote(in); got != want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

// script is a sequence of resolver calls: "cd X" sets the cwd, "new" asks
// for new repos, anything else is a target.
func runScript(p *Paths, steps []string) []string {
	var out []string
	for _, s := range steps {
		switch {
		case strings.HasPrefix(s, "cd "):
			p.SetCWD(s[3:])
			out = append(out, "cwd "+p.CWDRepo())
		case s == "new":
			for _, r := range p.NewRepos() {
				out = append(out, "repo "+r.Key+" "+r.Name+" "+r.Remote)
			}
		default:
			t := p.Target(s, "read", "")
			out = append(out, t.Repo+"|"+t.Path+"|"+t.Label)
		}
	}
	return out
}

func TestPathsStateRoundTrip(t *testing.T) {
	tmp := tempRoot(t)
	mkfile(t, tmp+"/real/.git/config", "[remote \"origin\"]\n\turl = git@github.com:acme/real.git\n")
	steps := []string{
		"cd /Users/zz-agentmap-test/a", "x.go", "new",
		"cd /Users/zz-agentmap-test/a/sub", "y.go", "../z.go",
		"cd " + tmp + "/real", "f.txt", "new",
		"cd /Users/zz-agentmap-test/b", "q.go",
		"/Users/zz-agentmap-test/a/sub/y.go", "new",
		"cd /Users/zz-agentmap-test", "w.txt",
		"cd /Users/zz-agentmap-test/b/deeper", "r.go", "new",
		`cd C:\Users\w\proj`, `src\main.rs`, "new",
		"cd sub", "lib.rs", "cd sub", "mod.rs", "new",
		"/Users/zz-agentmap-test/Documents/d.pdf",
	}
	all := runScript(NewPaths(), steps)
	for cut := 0; cut <= len(steps); cut++ {
		p := NewPaths()
		first := runScript(p, steps[:cut])
		state, err := p.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		q, err := RestorePaths(state)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got := append(first, runScript(q, steps[cut:])...)
		if !reflect.DeepEqual(got, all) {
			t.Errorf("cut %d:\n got %q\nwant %q", cut, got, all)
		}
	}
}

func TestRestorePathsErrors(t *testing.T) {
	if p, err := RestorePaths(nil); err != nil || p == nil {
		t.Fatalf("RestorePaths(nil) = %v, %v", p, err)
	}
	for _, bad := range []string{
		`{"v":1,"cwd":"/canary-path","cr":0}`,
		`{"v":9}`,
		`not json canary-path`,
		`{"v":1,"cr":-1,"roots":[{"p":"/canary-path","k":"000000000000","n":"x"}]}`,
	} {
		_, err := RestorePaths([]byte(bad))
		if err == nil {
			t.Errorf("RestorePaths(%q) succeeded", bad)
			continue
		}
		if strings.Contains(err.Error(), "canary") {
			t.Errorf("error quotes the state: %v", err)
		}
	}
}

// No value a resolver returns may hold an absolute path or the root.
func TestPathsNeverReturnAbsolute(t *testing.T) {
	tmp := tempRoot(t)
	mkfile(t, tmp+"/r/.git/HEAD", "x")
	p := NewPaths()
	p.SetCWD(tmp + "/r")
	for _, in := range []string{"a", tmp + "/r/b", "/etc/x", tmp + "/r/../r/c", `C:\x\y`, "~/z"} {
		got := p.Target(in, "read", "")
		for _, s := range []string{got.Repo, got.Path, got.Label} {
			if strings.Contains(s, tmp) || strings.HasPrefix(s, "/") && s != LabelScratch {
				t.Errorf("Target(%q) = %+v holds a path", in, got)
			}
		}
	}
	for _, r := range p.NewRepos() {
		if strings.Contains(r.Key+r.Name+r.Remote, "/") {
			t.Errorf("repo %+v holds a path", r)
		}
	}
}

func BenchmarkTarget(b *testing.B) {
	p := NewPaths()
	p.SetCWD("/Users/zz-agentmap-test/proj")
	paths := []string{"src/a.go", "/Users/zz-agentmap-test/proj/src/b.go", "../other/x", "/tmp/y", "README.md"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Target(paths[i%len(paths)], "read", "")
	}
}

func BenchmarkTargetUncached(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := NewPaths()
		p.SetCWD("/Users/zz-agentmap-test/proj")
		p.Target("src/pkg/file.go", "read", "")
	}
}

// A working directory in scratch space that no longer exists stays scratch:
// it must not become a project root named after its last segment.
func TestPathsVanishedScratchCWD(t *testing.T) {
	for _, cwd := range []string{"/tmp/agentmap-gone-xyz/proj", "/private/tmp/agentmap-gone-xyz", "C:\\Users\\u\\AppData\\Local\\Temp\\agentmap-gone"} {
		p := NewPaths()
		p.SetCWD(cwd)
		got := p.Target("a.go", "read", "")
		if got.Repo != "" || got.Label != LabelScratch {
			t.Errorf("cwd %s: target = %+v, want the scratch label", cwd, got)
		}
		if repos := p.NewRepos(); len(repos) != 0 {
			t.Errorf("cwd %s: repos %+v, want none", cwd, repos)
		}
	}
}
