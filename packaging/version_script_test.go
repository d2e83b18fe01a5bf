package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Builds between releases are versioned by their commit's time in UTC,
// to the second, before the sha: two builds of one day sort in the order
// they were committed, which the sha (hex) does not give.
func TestVersionOfAnUntaggedCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := os.ReadFile(filepath.Join("..", "scripts", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(date string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	version := func() string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join(repo, "scripts", "version.sh"))
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("version.sh: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q")
	git("", "add", "scripts")
	var versions []string
	// The same day in UTC, the first one given in another zone.
	for _, date := range []string{"2026-03-04T11:08:07+0200", "2026-03-04T21:00:00+0000"} {
		git(date, "commit", "-q", "--allow-empty", "-m", "c")
		versions = append(versions, version())
	}
	sha := git("", "rev-parse", "--short=12", "HEAD~1")
	if want := "0.0.0~git20260304090807." + sha; versions[0] != want {
		t.Errorf("version %s, want %s", versions[0], want)
	}
	// A Debian version (and semver-like: no numeric part with a leading zero).
	deb := regexp.MustCompile(`^0\.0\.0~git[1-9][0-9]{13}\.[0-9a-f]{12}$`)
	for _, v := range versions {
		if !deb.MatchString(v) {
			t.Errorf("%s is not 0.0.0~git<YYYYMMDDHHMMSS>.<sha>", v)
		}
	}
	if _, err := exec.LookPath("dpkg"); err == nil {
		if err := exec.Command("dpkg", "--compare-versions", versions[1], "gt", versions[0]).Run(); err != nil {
			t.Errorf("dpkg does not sort %s after %s", versions[1], versions[0])
		}
	}
}
