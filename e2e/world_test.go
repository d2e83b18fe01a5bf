package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// canary marks every scripted text: prompts, replies, thinking, tool
// inputs, command arguments and file contents. It must never reach a map,
// the state database or the daemon's log.
const canary = "zqcanary"

// world is a throwaway HOME with a git repository and the clients' config.
type world struct {
	root   string // everything lives below
	home   string
	repo   string // the Claude Code project
	xrepo  string // the Codex project
	claude string // CLAUDE_CONFIG_DIR
	codex  string // CODEX_HOME
	data   string // agentmap --data-dir
	bin    string // node_modules/.bin of the clients
	env    []string
	// after, if set, runs after each client command with its name.
	after func(name string)
}

// newWorld makes the directories. Codex refuses to set up its helper
// binaries below the temporary directory, so the world lives in /var/tmp
// when it can, or in AGENTMAP_E2E_WORLD_DIR when that is set (a run that
// must keep to a scratch directory of its own).
func newWorld(t *testing.T, bin string) *world {
	t.Helper()
	base := os.Getenv("AGENTMAP_E2E_WORLD_DIR")
	if fi, err := os.Stat("/var/tmp"); base == "" && err == nil && fi.IsDir() {
		base = "/var/tmp"
	}
	root, err := os.MkdirTemp(base, "agentmap-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("AGENTMAP_E2E_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(root) })
	} else {
		t.Logf("world kept in %s", root)
	}
	w := &world{
		root:  root,
		home:  filepath.Join(root, "home"),
		repo:  filepath.Join(root, "home", "src", "claude-demo"),
		xrepo: filepath.Join(root, "home", "src", "codex-demo"),
		data:  filepath.Join(root, "agentmap"),
		bin:   bin,
	}
	w.claude = filepath.Join(w.home, ".claude")
	w.codex = filepath.Join(w.home, ".codex")
	for _, d := range []string{w.repo, w.xrepo, w.claude, w.codex, w.data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.env = []string{
		"HOME=" + w.home,
		"USER=e2e",
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"CLAUDE_CONFIG_DIR=" + w.claude,
		"CODEX_HOME=" + w.codex,
		"NO_COLOR=1",
		"NPM_CONFIG_UPDATE_NOTIFIER=false",
		"NPM_CONFIG_OFFLINE=true",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.seedRepo(t, w.repo)
	w.seedRepo(t, w.xrepo)
	return w
}

// seedRepo writes a small project whose test fails until notes.txt says
// "ready", and commits it.
func (w *world) seedRepo(t *testing.T, repo string) {
	t.Helper()
	files := map[string]string{
		"README.md":    "# demo\n\n" + canary + "-readme: a project for the end-to-end suite.\n",
		"package.json": `{"name":"demo","version":"1.0.0","private":true,"scripts":{"test":"node check.js"}}` + "\n",
		"check.js": "const fs = require('fs');\n" +
			"const s = fs.existsSync('notes.txt') ? fs.readFileSync('notes.txt', 'utf8') : '';\n" +
			"if (!s.includes('ready')) { console.error('not ready'); process.exit(1); }\n" +
			"console.log('ok');\n",
		"src/app.js": "// " + canary + "-source\nmodule.exports = { answer: 41 };\n",
	}
	for i := 0; i < 12; i++ {
		files[filepath.Join("lib", fmt.Sprintf("part%02d.txt", i))] = canary + "-part " + strconv.Itoa(i) + "\n"
	}
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "e2e@example.com"},
		{"config", "user.name", "e2e"},
		{"remote", "add", "origin", "https://github.com/acme/demo.git"},
		{"add", "-A"},
		{"commit", "-q", "-m", "seed"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
