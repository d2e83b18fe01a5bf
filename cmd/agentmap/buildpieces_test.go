package main

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/watchers/opencode/storagetest"
)

// withPieces makes builds go in pieces of from inputs, and returns where
// the number of pieces of the last one is.
func withPieces(t *testing.T, from int) *int {
	t.Helper()
	old := piecesFrom
	piecesFrom = from
	n := new(int)
	piecesMade = func(pieces int) { *n = pieces }
	t.Cleanup(func() { piecesFrom, piecesMade = old, nil })
	return n
}

// A build in pieces writes the maps of a build in one plan, byte for byte,
// and says the same things, in another order: the layout of spanning logs
// (a main log with its subagent files, a rotation's halves, a Codex child
// and its parent, a single-document and a compressed rollout, files of no
// agent) and the corpus (Cursor's databases among it), given as a
// directory and as a list, in pieces of one to five inputs.
func TestBuildInPiecesWritesWhatOnePlanWrites(t *testing.T) {
	dir, logs := inputsLayout(t)
	chats := chatLayout(t, filepath.Join(t.TempDir(), "chats"))
	inputs := [][]string{{dir}, logs, {chats}}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "corpus")); err == nil {
		// The corpus's files as inputs: a walk passes over its Cursor
		// databases, which are not named as Cursor names them.
		withCorpus := []string{dir}
		for _, agent := range []string{"claude", "codex", "cursor"} {
			withCorpus = append(withCorpus, corpusLogs(t, agent)...)
		}
		inputs = append(inputs, withCorpus)
	} else {
		t.Log("no corpus at ../shared/corpus: the layout alone")
	}
	for _, given := range inputs {
		list := filepath.Join(t.TempDir(), "list")
		os.WriteFile(list, []byte(strings.Join(given, "\n")+"\n"), 0o600)
		for _, args := range [][]string{given, {"--inputs", list}} {
			want, wantSaid := builtSaying(t, args...)
			for _, from := range []int{1, 2, 3, 5} {
				pieces := withPieces(t, from)
				got, said := builtSaying(t, args...)
				if *pieces < 2 {
					t.Fatalf("build %v in pieces of %d: %d pieces", args, from, *pieces)
				}
				sameMaps(t, "in pieces", got, want)
				if !slices.Equal(said, wantSaid) {
					t.Errorf("build %v in pieces of %d (%d pieces) says\n%s\nin one plan\n%s", args, from, *pieces,
						strings.Join(said, "\n"), strings.Join(wantSaid, "\n"))
				}
				piecesFrom = 1 << 30
			}
		}
	}
}

// chatLayout lays out in dir the logs of agents that keep a session in
// several files otherwise: Gemini CLI's chats (a main log with a subagent
// log in the directory named after its session), and the same files in a
// directory not named chats, where the subagent log is a session of its
// own, which the main log's plan still finds beside it; and OpenCode's
// JSON storage, a file a session (a child session's file gives nothing,
// its root reads it). It returns dir.
func chatLayout(t *testing.T, dir string) string {
	t.Helper()
	put, read := treeWriter(t, dir)
	real := filepath.Join("..", "..", "watchers", "gemini", "testdata", "real", "tmp", "gemini-demo", "chats")
	filepath.WalkDir(real, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(real, p)
			put(filepath.Join("gemini", "chats", rel), read(p))
			put(filepath.Join("gemini", "backup", rel), read(p))
		}
		return nil
	})
	writes, err := storagetest.Writes(context.Background(), filepath.Join("..", "..", "watchers", "opencode", "testdata", "opencode-1.18.33-e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		put(filepath.Join("opencode", filepath.FromSlash(w.Path)), w.Data)
	}
	return dir
}

// Cycles of parent sessions (no agent writes them) put their sessions in
// one piece, whichever of them the look-up starts from.
func TestPiecesOfAParentCycle(t *testing.T) {
	p := &inputPieces{parents: map[uint64]uint64{10: 11, 11: 12, 12: 10, 20: 11, 30: 31}}
	for _, pieces := range []int{2, 3, 7} {
		want := p.pieceOf(10, pieces)
		for _, h := range []uint64{11, 12, 20} {
			if got := p.pieceOf(h, pieces); got != want {
				t.Errorf("%d pieces: session %d in piece %d, its cycle's in %d", pieces, h, got, want)
			}
		}
		if got, want := p.pieceOf(30, pieces), int(31%uint64(pieces)); got != want {
			t.Errorf("%d pieces: a child in piece %d, its parent's is %d", pieces, got, want)
		}
	}
}

// A build that cannot keep its list of inputs builds nothing and says why.
func TestBuildInPiecesWithoutATemporaryDirectory(t *testing.T) {
	_, logs := inputsLayout(t)
	withPieces(t, 2)
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "none"))
	out := t.TempDir()
	code, _, stderr := run(t, append([]string{"build", "-o", out}, logs...)...)
	written, _ := filepath.Glob(filepath.Join(out, "*"))
	if code != exitFailure || !strings.Contains(stderr, "keeps their list in a file, which could not be made") || len(written) > 0 {
		t.Errorf("exit %d, %d maps written, said %q", code, len(written), stderr)
	}
}

// A database input is read in every piece, and its problems are said
// once: a damaged Cursor database among logs fails a build in pieces as it
// fails one in a single plan, saying the same.
func TestBuildInPiecesSaysADatabasesProblemsOnce(t *testing.T) {
	dir, logs := inputsLayout(t)
	// Cursor's tables, but a composer's row without its value: found a
	// database, and not read.
	broken := filepath.Join(dir, "workspaceStorage", "state.vscdb")
	os.MkdirAll(filepath.Dir(broken), 0o700)
	db, err := sql.Open("sqlite", "file:"+broken)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE ItemTable (key TEXT, value BLOB)", "CREATE TABLE cursorDiskKV (key TEXT)",
		"INSERT INTO cursorDiskKV VALUES ('composerData:0a1b2c3d')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	args := append(slices.Clone(logs), broken)
	say := func() (int, []string) {
		code, _, stderr := run(t, append([]string{"build", "-o", t.TempDir()}, args...)...)
		var lines []string
		for l := range strings.Lines(stderr) {
			if !strings.HasSuffix(strings.TrimSpace(l), ".json.gz") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		slices.Sort(lines)
		return code, lines
	}
	wantCode, want := say()
	if wantCode != exitFailure || !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, broken) }) {
		t.Fatalf("a damaged database: exit %d, %q", wantCode, want)
	}
	pieces := withPieces(t, 2)
	code, got := say()
	if *pieces < 2 || code != wantCode || !slices.Equal(got, want) {
		t.Errorf("in %d pieces: exit %d, says\n%s\nin one plan: exit %d, says\n%s", *pieces, code,
			strings.Join(got, "\n"), wantCode, strings.Join(want, "\n"))
	}
}

// builtSaying is built, with the lines the build wrote on stderr, sorted,
// the output directory made neutral.
func builtSaying(t *testing.T, args ...string) (map[string][]byte, []string) {
	t.Helper()
	maps, stderr := built(t, args...)
	var lines []string
	for l := range strings.Lines(stderr) {
		if strings.HasSuffix(strings.TrimSpace(l), ".json.gz") {
			l = filepath.Base(l) // the map written, in a directory of its own
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	slices.Sort(lines)
	return maps, lines
}

// The tests of build's inputs, problems and outputs, with every input a
// piece of its own: what they check holds of a build in pieces too.
func TestBuildTestsInPieces(t *testing.T) {
	withPieces(t, 1)
	t.Run("inputs", TestBuildInputsListAndDirectory)
	t.Run("input errors", TestBuildInputsErrors)
	t.Run("links and unreadable", TestBuildWalkLinksAndUnreadable)
	t.Run("unreadable", TestBuildUnreadable)
	t.Run("good beside bad", TestBuildGoodBesideBad)
	t.Run("outputs", TestBuildOutputs)
	t.Run("config exclude", TestBuildConfigExclude)
	t.Run("input problems", TestBuildInputErrors)
	t.Run("flags", TestBuildFlags)
	t.Run("config options", TestBuildConfigOptions)
	t.Run("as collected", TestBuildStreamsAsCollected)
}
