package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// inputsLayout lays out an agent's tree in a directory: a Claude main log
// with its subagent files beside it, a log cut by a copy-truncate rotation,
// a Codex child rollout and its parent, a single-document and a compressed
// rollout, and files that are no agent's logs. It returns the directory
// and the logs one gives as arguments for the same sessions.
func inputsLayout(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	logs := spanningLogs(t, dir, "projects/-home-dev-proj/", "projects/-home-dev-rot/", "sessions/2025/11/07/")
	put, read := treeWriter(t, dir)
	const codexDir = "../../testdata/codex/"
	for _, f := range []string{"rollout-2025-08-23-79aa6488-0000-4000-8000-00000000e005.json",
		"rollout-2025-11-07T09-00-00-019a5baa-0000-7000-8000-00000000c006.jsonl.zst"} {
		logs = append(logs, put("sessions/2025/08/23/"+f, read(codexDir+f)))
	}
	// What an agent keeps beside its logs, and other files.
	put("history.jsonl", []byte(`{"display":"CANARY-PROMPT fix the bug","timestamp":1}`+"\n"))
	put("projects/-home-dev-proj/empty.jsonl", nil)
	put("settings.json", []byte(`{"CANARY-SETTING": true}`))
	put("notes.txt", []byte("CANARY-NOTES\n"))
	// A log renamed by whoever copied it, and a database likewise (what
	// the walk cannot take by its name, and counts).
	put("projects/-home-dev-proj/transcript-copy.zst", []byte("x"))
	put("work__store.db", []byte("x"))
	return dir, logs
}

// built runs build -o DIR with args and returns the maps written, by name.
func built(t *testing.T, args ...string) (map[string][]byte, string) {
	t.Helper()
	out := t.TempDir()
	code, _, stderr := run(t, append([]string{"build", "-o", out}, args...)...)
	if code != exitOK {
		t.Fatalf("build %v: exit %d: %s", args, code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json.gz"))
	maps := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		maps[filepath.Base(f)] = b
	}
	return maps, stderr
}

func sameMaps(t *testing.T, how string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d maps, want %d", how, len(got), len(want))
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs from the build of the same logs as arguments (written: %v)", how, name, ok)
		}
	}
}

// A directory, a list of paths in a file or on standard input (lines,
// CRLF lines or NUL-separated) build the same maps, byte for byte, as the
// logs given as arguments.
func TestBuildInputsListAndDirectory(t *testing.T) {
	dir, logs := inputsLayout(t)
	want, _ := built(t, logs...)
	if len(want) < 5 {
		t.Fatalf("the layout built %d maps", len(want))
	}

	got, stderr := built(t, dir)
	sameMaps(t, "a directory", got, want)
	if !strings.Contains(stderr, "2 files found in the directories are logs of no agent: skipped") {
		t.Errorf("the walk does not say what it skipped: %q", stderr)
	}
	// The files a walk leaves out by their names that may be logs (of
	// their kinds: lines, compressed, databases) are counted, in one line,
	// none named; settings.json, notes.txt and the .golden files of the
	// subagents' fixture are no logs, and a subagent's meta.json is read
	// with its log.
	if !strings.Contains(stderr, "agentmap build: 2 files found in the directories left out: their names are none an agent gives its logs (give such a file as an argument to build it)\n") {
		t.Errorf("the walk does not say what it left out by name: %q", stderr)
	}
	if strings.Contains(stderr, "CANARY") || strings.Contains(stderr, "settings.json") || strings.Contains(stderr, "notes.txt") {
		t.Errorf("stderr names or quotes a file: %q", stderr)
	}
	got, stderr = built(t, filepath.Join(dir, "projects"), filepath.Join(dir, "sessions", "2025"))
	sameMaps(t, "subdirectories", got, want)
	if !strings.Contains(stderr, "agentmap build: 1 file found in the directories left out: its name is") {
		t.Errorf("the walk of subdirectories does not count the renamed log it left out (and only it): %q", stderr)
	}

	list := filepath.Join(t.TempDir(), "list")
	os.WriteFile(list, []byte(strings.Join(logs, "\r\n")+"\r\n\r\n"), 0o600)
	got, _ = built(t, "--inputs", list)
	sameMaps(t, "a list file with CRLF lines", got, want)

	// Arguments and the list together; a path in both is read once.
	got, _ = built(t, append([]string{"--inputs", list}, logs[:2]...)...)
	sameMaps(t, "arguments and a list", got, want)

	old := buildStdin
	defer func() { buildStdin = old }()
	buildStdin = strings.NewReader(strings.Join(logs, "\n"))
	got, _ = built(t, "--inputs", "-")
	sameMaps(t, "a list on standard input", got, want)

	buildStdin = strings.NewReader(dir + "\x00")
	got, _ = built(t, "--inputs", "-", "--null")
	sameMaps(t, "a NUL-separated list naming a directory", got, want)
}

// A list that cannot be read whole builds nothing, with an error naming
// the list (and the line), never what a line holds.
func TestBuildInputsErrors(t *testing.T) {
	tmp := t.TempDir()
	long := filepath.Join(tmp, "long")
	os.WriteFile(long, []byte(fixture+"\n"+strings.Repeat("CANARY", 20000)+"\n"), 0o600)
	nul := filepath.Join(tmp, "nul")
	os.WriteFile(nul, []byte(fixture+"\x00CANARY\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing list", []string{"--inputs", filepath.Join(tmp, "nope")}, exitFailure, "--inputs " + filepath.Join(tmp, "nope") + ": no such file"},
		{"list is a directory", []string{"--inputs", tmp}, exitFailure, "--inputs " + tmp + ": is a directory"},
		{"line too long", []string{"--inputs", long}, exitFailure, "line 2 is longer than 64 KiB: not a list of paths"},
		{"NUL in a line", []string{"--inputs", nul}, exitFailure, "line 1 holds a NUL byte"},
		{"--null alone", []string{"--null", fixture}, exitUsage, "--null applies to the list of --inputs"},
		{"a missing path in the list", nil, exitFailure, "nope.jsonl: no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := tc.args
			if args == nil {
				list := filepath.Join(t.TempDir(), "list")
				os.WriteFile(list, []byte(filepath.Join(tmp, "nope.jsonl")+"\n"), 0o600)
				args = []string{"--inputs", list}
			}
			code, _, stderr := run(t, append([]string{"build", "-o", out}, args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
			if strings.Contains(stderr, "CANARY") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr quotes the list or crashed: %.200q", stderr)
			}
			if maps, _ := filepath.Glob(filepath.Join(out, "*")); len(maps) > 0 {
				t.Errorf("a list that failed built %d maps", len(maps))
			}
		})
	}
}

// The plan's table keeps every path exactly as given: relative, absolute,
// with no directory, a trailing separator's file, long (several bytes of
// length), non-ASCII.
func TestPlanPathsRoundTrip(t *testing.T) {
	paths := []string{"a.jsonl", "./a.jsonl", "/abs/dir/b.jsonl", "dir/", "/", "rel/dir/" + strings.Repeat("x", 300) + ".jsonl",
		"/home/é/日本/c.jsonl", "/abs/dir/c.jsonl", "-home-x/d.jsonl", "a b/ c .jsonl"}
	pl := &buildPlan{}
	var refs []uint64
	for _, p := range paths {
		refs = append(refs, pl.addPath(p))
	}
	for i, p := range paths {
		if got := pl.path(refs[i]); got != p {
			t.Errorf("path %q came back as %q", p, got)
		}
	}
	if len(pl.dirs) != 9 {
		t.Errorf("%d directories kept, want 9 (each once)", len(pl.dirs))
	}
}

// A build paces the collector while it runs and gives it back its setting
// however it ends (built, or refused for a list it could not read).
func TestBuildGivesTheCollectorBack(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: a build leaves the collector alone")
	}
	orig := debug.SetGCPercent(77)
	defer debug.SetGCPercent(orig)
	for _, args := range [][]string{{fixture}, {"--inputs", filepath.Join(t.TempDir(), "nope")}} {
		run(t, append([]string{"build", "-o", t.TempDir()}, args...)...)
		if got := debug.SetGCPercent(77); got != 77 {
			t.Errorf("build %v left GOGC at %d, not 77", args, got)
		}
	}
}

// A walk does not follow a symbolic link to a directory (one that loops
// back makes no endless walk), and a subdirectory it cannot read is an
// error naming it, the other logs still built.
func TestBuildWalkLinksAndUnreadable(t *testing.T) {
	dir, logs := inputsLayout(t)
	want, _ := built(t, logs...)
	if err := os.Symlink(dir, filepath.Join(dir, "projects", "loop")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	got, _ := built(t, dir)
	sameMaps(t, "a directory with a link back to itself", got, want)

	if os.Geteuid() == 0 {
		t.Skip("running as root: directory permissions do not stop reads")
	}
	locked := filepath.Join(dir, "locked")
	os.MkdirAll(locked, 0o700)
	os.WriteFile(filepath.Join(locked, "x.jsonl"), []byte("CANARY\n"), 0o600)
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o700)
	out := t.TempDir()
	code, _, stderr := run(t, "build", "-o", out, dir)
	if code != exitFailure || !strings.Contains(stderr, locked+": permission denied (the logs in it are not read)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if maps, _ := filepath.Glob(filepath.Join(out, "*.json.gz")); len(maps) != len(want) {
		t.Errorf("%d maps built beside the unreadable directory, want %d", len(maps), len(want))
	}
}

// Sessions whose hashes collide in the plan's index stay apart: with
// every session given the same hash, the maps are the same.
func TestPlanSessionHashClash(t *testing.T) {
	dir, logs := inputsLayout(t)
	want, _ := built(t, logs...)
	old := sessionHash
	defer func() { sessionHash = old }()
	sessionHash = func(uint8, string) uint64 { return 42 }
	got, _ := built(t, dir)
	sameMaps(t, "every session hashed alike", got, want)
}
