package state

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The state database is mapped with a 1 GiB reserve; a process whose
// address space is capped below that (ulimit -v) still opens and writes it
// with bbolt's own smaller mappings. The open runs in a child process, as
// the cap cannot be lifted again once set.
func TestOpenUnderAddressSpaceLimit(t *testing.T) {
	if path := os.Getenv("AGENTMAP_STATE_OPEN_CAPPED"); path != "" {
		openCapped(path)
		return
	}
	if mmapReserve() == 0 {
		t.Skip("no reserve on this platform")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenUnderAddressSpaceLimit$")
	cmd.Env = append(os.Environ(), "AGENTMAP_STATE_OPEN_CAPPED="+path)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "capped open: ok") {
		t.Fatalf("open under a capped address space: %v\n%s", err, out)
	}
	db, err := Open(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("reopen without the cap: %v", err)
	}
	defer db.Close()
	srcs, _, err := db.Load()
	if err != nil || len(srcs) != 1 || srcs[0].Path != "/capped.jsonl" {
		t.Fatalf("the record written under the cap: %v, %d records", err, len(srcs))
	}
}

// openCapped caps the address space at what the process maps now plus
// 256 MiB (room for the heap, not for the reserve), then opens path and
// writes a record.
func openCapped(path string) {
	vm := vmSize()
	if vm == 0 {
		os.Stdout.WriteString("cannot read VmSize\n")
		os.Exit(2)
	}
	limit := uint64(vm + 256<<20)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		os.Stdout.WriteString("setrlimit: " + err.Error() + "\n")
		os.Exit(2)
	}
	db, err := Open(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		os.Stdout.WriteString("open: " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := db.PutSource(&Source{ID: 7, Path: "/capped.jsonl", Agent: "claude", Form: "lines"}); err != nil {
		os.Stdout.WriteString("put: " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := db.Close(); err != nil {
		os.Stdout.WriteString("close: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("capped open: ok\n")
	os.Exit(0)
}

func vmSize() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
