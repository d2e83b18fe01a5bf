package watchers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inotify says its watch table is full with ENOSPC, "no space left on
// device", which reads as a full disk: the watcher names the limit and its
// value instead, and the instance limit for EMFILE.
func TestWatchLimitNamesTheSetting(t *testing.T) {
	watches, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		t.Skipf("SKIP: no inotify limits to read here: %v", err)
	}
	got := watchLimit(fmt.Errorf("add watch: %w", syscall.ENOSPC))
	if want := "fs.inotify.max_user_watches = " + strings.TrimSpace(string(watches)); !strings.Contains(got, want) {
		t.Errorf("ENOSPC: %q, want %q in it", got, want)
	}
	if strings.Contains(got, "space") {
		t.Errorf("ENOSPC still reads as a full disk: %q", got)
	}
	if got := watchLimit(syscall.EMFILE); !strings.Contains(got, "fs.inotify.max_user_instances") {
		t.Errorf("EMFILE: %q", got)
	}
	if got := watchLimit(syscall.EACCES); got != "" {
		t.Errorf("EACCES is no limit: %q", got)
	}
}

// A watcher whose user has no inotify instance left (every one held by
// other programs) follows by rescans and says which limit it hit. Run for
// real: the test binary runs itself again as an unprivileged user of its
// own (the limit is per user), holds every instance that user may have,
// and starts a watcher. Only root can switch users; elsewhere it skips.
func TestWatcherSaysTheInotifyLimitItHit(t *testing.T) {
	if os.Getenv("AGENTMAP_INOTIFY_CHILD") == "1" {
		inotifyLimitChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: only root can run the test as another user, whose inotify instances it can use up")
	}
	// A directory that user can reach (t.TempDir's parent is root's
	// alone), holding a copy of the test binary it can run.
	dir, err := os.MkdirTemp("", "agentmap-inotify-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "watchers.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestWatcherSaysTheInotifyLimitItHit$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTMAP_INOTIFY_CHILD=1", "AGENTMAP_INOTIFY_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the watcher as uid 65534: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the child ran no test:\n%s", out)
	}
}

func inotifyLimitChild(t *testing.T) {
	var held []int
	defer func() {
		for _, fd := range held {
			syscall.Close(fd)
		}
	}()
	for {
		fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
		if err != nil {
			if err != syscall.EMFILE {
				t.Fatalf("inotify_init1: %v", err)
			}
			break
		}
		held = append(held, fd)
		if len(held) > 1<<16 {
			t.Skip("SKIP: no inotify instance limit met")
		}
	}
	root := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(os.Getenv("AGENTMAP_INOTIFY_DIR"), ".codex")}
	r := startWatcher(t, []Root{root}, WatchOptions{Rescan: 30 * time.Millisecond})
	roll := filepath.Join(root.Dir, "sessions", "2026", "01", "02", "rollout-y.jsonl")
	write(t, roll, "{}\n")
	r.waitFor("the log, by a rescan", func(m map[string]FileStat) bool { return m[roll].Size == 3 })
	if p := r.w.Problem(); !strings.Contains(p, "fs.inotify.max_user_instances") {
		t.Errorf("Problem() = %q, want the instance limit named (%d instances held)", p, len(held))
	}
}
