package datadir

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUnsafe(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "agentmap", "config.toml")
	for dir, unsafe := range map[string]bool{
		"/":                            true,
		home:                           true,
		filepath.Dir(home):             true,
		home + "/":                     true,
		filepath.Join(home, ".config"): true,
		filepath.Join(home, ".config", "agentmap"):         true,
		filepath.Join(home, "x", ".."):                     true,
		filepath.Join(home, ".local", "share", "agentmap"): false,
		filepath.Join(home, ".config", "agentmap", "data"): false,
	} {
		if got := Unsafe(dir, home, cfg) != ""; got != unsafe {
			t.Errorf("Unsafe(%s) = %v, want %v", dir, got, unsafe)
		}
	}
	// A symbolic link to the home directory is the home directory.
	link := filepath.Join(t.TempDir(), "h")
	os.Symlink(home, link)
	if Unsafe(link, home, "") == "" {
		t.Error("a link to home is accepted")
	}
}

func TestClaimAndPurgeable(t *testing.T) {
	home := t.TempDir()
	fresh := filepath.Join(home, "data")
	if err := Claim(fresh); err != nil {
		t.Fatal(err)
	}
	if err := Purgeable(fresh, home, ""); err != nil {
		t.Fatalf("a directory agentmap made: %v", err)
	}
	// One made before markers, holding only agentmap's entries, is
	// adopted; one holding anything else is used but never purged.
	old := filepath.Join(home, "old")
	os.MkdirAll(filepath.Join(old, "maps"), 0o700)
	os.WriteFile(filepath.Join(old, "state.db"), nil, 0o600)
	os.WriteFile(filepath.Join(old, "state.db.corrupt-20260101T000000Z"), nil, 0o600)
	Claim(old)
	if err := Purgeable(old, home, ""); err != nil {
		t.Fatalf("an old store: %v", err)
	}
	mixed := filepath.Join(home, "mixed")
	os.MkdirAll(mixed, 0o700)
	os.WriteFile(filepath.Join(mixed, "thesis.tex"), nil, 0o600)
	Claim(mixed)
	if err := Purgeable(mixed, home, ""); err == nil || !strings.Contains(err.Error(), "did not make it") {
		t.Fatalf("a directory with other files: %v", err)
	}
	// Even with a marker, home is never removed.
	os.WriteFile(filepath.Join(home, Marker), nil, 0o600)
	if err := Purgeable(home, home, ""); err == nil {
		t.Fatal("home is purgeable")
	}
}

func TestCheck(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Log("as root, ownership by another user is tested with chown")
	}
	dir := filepath.Join(t.TempDir(), "data")
	Claim(dir)
	if err := Check(dir); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	other := t.TempDir()
	for name, plant := range map[string]func() string{
		"maps symlink": func() string {
			os.Symlink(other, filepath.Join(dir, "maps"))
			return filepath.Join(dir, "maps")
		},
		"state.db symlink": func() string {
			os.WriteFile(filepath.Join(other, "s"), nil, 0o600)
			os.Symlink(filepath.Join(other, "s"), filepath.Join(dir, "state.db"))
			return filepath.Join(dir, "state.db")
		},
		"hash.key readable": func() string {
			os.WriteFile(filepath.Join(dir, "hash.key"), make([]byte, 32), 0o644)
			os.Chmod(filepath.Join(dir, "hash.key"), 0o644)
			return filepath.Join(dir, "hash.key")
		},
		"dir writable by others": func() string {
			os.Chmod(dir, 0o777)
			return dir
		},
		"state.db of another user": func() string {
			p := filepath.Join(dir, "state.db")
			os.WriteFile(p, nil, 0o600)
			if os.Geteuid() == 0 {
				os.Chown(p, 4242, 4242)
			} else {
				return ""
			}
			return p
		},
	} {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(dir)
			Claim(dir)
			path := plant()
			if path == "" {
				t.Skip("changing a file's owner needs root")
			}
			err := Check(dir)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Check = %v, want an error naming %s", err, path)
			}
		})
	}
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// A marked directory the user later put files in: purge removes only
// agentmap's entries, and the directory stays with the user's.
func TestPurgeKeepsTheUsersFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	if err := Claim(dir); err != nil {
		t.Fatal(err)
	}
	// Files named like agentmap's but not by agentmap (a copy of a
	// damaged database made by hand, a log of another launchd job) are the
	// user's.
	users := []string{"thesis.tex", "photos/1.jpg", "state.db.corrupt-backup-mine", "other.job.out.log"}
	ours := []string{"state.db", "state.db.corrupt-20261207T104811Z", "state.db.corrupt-20261207T104811Z-2",
		"com.github.agentmap.agentmap.err.log", "maps/a.json.gz", "logs/agentmap.log", "agentmap.lock"}
	for _, name := range append(slices.Clone(users), ours...) {
		write(t, filepath.Join(dir, name))
	}
	r, err := Purge(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range users {
		if !exists(filepath.Join(dir, name)) {
			t.Errorf("%s was removed", name)
		}
	}
	for _, name := range append(ours, "maps", "logs", Marker) {
		if exists(filepath.Join(dir, name)) {
			t.Errorf("%s stays", name)
		}
	}
	if got := strings.Join(r.Kept, ","); got != "other.job.out.log,photos/,state.db.corrupt-backup-mine,thesis.tex" || r.DirGone {
		t.Errorf("kept %q, directory gone %v", got, r.DirGone)
	}
}

// The config file in use stays even when it has an agentmap name or lies
// in an entry agentmap owns; a directory holding only agentmap's goes.
func TestPurgeKeepsTheConfigFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := Claim(dir); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "exports", "config.toml")
	write(t, cfg)
	write(t, filepath.Join(dir, "state.db"))
	if err := Purgeable(dir, t.TempDir(), cfg); err != nil {
		t.Fatal(err)
	}
	r, err := Purge(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !exists(cfg) || exists(filepath.Join(dir, "state.db")) || r.DirGone {
		t.Errorf("config kept %v, state.db removed %v, dir gone %v", exists(cfg), !exists(filepath.Join(dir, "state.db")), r.DirGone)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := Claim(dir); err != nil {
		t.Fatal(err)
	}
	if r, err := Purge(dir, ""); err != nil || !r.DirGone || exists(dir) {
		t.Errorf("a directory of agentmap's alone stays: %+v %v", r, err)
	}
}

// A data directory that is a symbolic link: the directory it leads to is
// purged; the link goes only once it would lead nowhere.
func TestPurgeThroughALink(t *testing.T) {
	base := t.TempDir()
	real, link := filepath.Join(base, "realdata"), filepath.Join(base, "linkdata")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Claim(link); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(link, "state.db"))
	write(t, filepath.Join(real, "mine.txt"))
	if err := Purgeable(link, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	r, err := Purge(link, "")
	if err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(real, "state.db")) || !exists(filepath.Join(real, "mine.txt")) || !exists(link) || r.LinkGone {
		t.Fatalf("with a file of the user's left: %+v", r)
	}
	os.Remove(filepath.Join(real, "mine.txt"))
	if err := Claim(link); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(link, "state.db"))
	r, err = Purge(link, "")
	if err != nil {
		t.Fatal(err)
	}
	if exists(real) || exists(link) || !r.DirGone || !r.LinkGone {
		t.Errorf("with nothing else: real stays %v, link stays %v: %+v", exists(real), exists(link), r)
	}
}

// The service's log file is opened (logs/ created) before the daemon
// claims the directory: the directory is still agentmap's.
func TestClaimAfterTheLogFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	write(t, filepath.Join(dir, "logs", "agentmap.log"))
	write(t, filepath.Join(dir, launchdLabel+".err.log"))
	if err := Claim(dir); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(dir, Marker)) {
		t.Error("not marked")
	}
}

// Names alone do not make a directory agentmap's: a maps/ of one's own
// files, another program's state.db, a logs/ of other logs leave it
// unmarked, and purge never removes it. A marked one is claimed as it is.
func TestClaimLooksAtWhatTheNamesHold(t *testing.T) {
	home := t.TempDir()
	bolt := make([]byte, 4096)
	binary.LittleEndian.PutUint32(bolt[16:], boltMagic)
	for name, files := range map[string]map[string][]byte{
		"photos":   {"maps/trips/vacation.png": []byte("png"), "maps/readme.txt": []byte("x")},
		"otherdb":  {"state.db": []byte("SQLite format 3\x00 and some more of another program's database")},
		"mapsfile": {"maps": []byte("a file")},
		"otherlog": {"logs/nginx.log": []byte("x")},
		"exports":  {"exports/report.pdf": []byte("x")},
		"keyonly":  {"hash.key": []byte("my secret key"), "device-id": []byte("mine")},
	} {
		dir := filepath.Join(home, name)
		for rel, b := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := Claim(dir); err != nil {
			t.Fatal(err)
		}
		if exists(filepath.Join(dir, Marker)) {
			t.Errorf("%s: marked as agentmap's", name)
		}
	}
	made := filepath.Join(home, "made")
	for rel, b := range map[string][]byte{"state.db": bolt, "maps/claude/2026/05/a.json.gz": []byte("x"),
		"maps/claude/2026/05/.b.json.gz.tmp-1": nil, "logs/agentmap.log": nil, "exports/a.jsonl": nil} {
		p := filepath.Join(made, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, b, 0o600)
	}
	if Claim(made); !exists(filepath.Join(made, Marker)) {
		t.Error("a data directory made before markers was not marked")
	}
}

// Purge removes the maps from maps/, not what the user put among them.
func TestPurgeKeepsFilesAmongTheMaps(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "data")
	if err := Claim(dir); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "maps", "claude", "2026", "05", "a.json.gz"))
	write(t, filepath.Join(dir, "maps", "codex", "2026", "05", "b.json.gz"))
	write(t, filepath.Join(dir, "maps", "claude", "notes", "mine.txt"))
	write(t, filepath.Join(dir, "logs", "agentmap.log"))
	write(t, filepath.Join(dir, "logs", "nginx.log"))
	write(t, filepath.Join(dir, "state.db"))
	r, err := Purge(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(dir, "maps", "claude", "notes", "mine.txt")) || r.DirGone {
		t.Fatalf("the user's file among the maps was removed: %+v", r)
	}
	if exists(filepath.Join(dir, "maps", "claude", "2026")) || exists(filepath.Join(dir, "maps", "codex")) || exists(filepath.Join(dir, "state.db")) {
		t.Errorf("agentmap's own entries left: %+v", r)
	}
	if !slices.Contains(r.Kept, "maps/claude/notes/mine.txt") || !slices.Contains(r.Kept, "logs/nginx.log") ||
		!exists(filepath.Join(dir, "logs", "nginx.log")) || exists(filepath.Join(dir, "logs", "agentmap.log")) {
		t.Errorf("kept %v: the user's files, not agentmap's log", r.Kept)
	}
}
