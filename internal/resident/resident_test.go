//go:build unix

package resident

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A mapping's pages count once touched, and not before.
func TestMappedCountsTouchedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 1<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("no mmap here: %v", err)
	}
	defer syscall.Munmap(m)
	before, err := Mapped(path)
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for i := 0; i < len(m); i += 4096 {
		sum += int(m[i])
	}
	after, err := Mapped(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum != 0 || after < 1000 || after <= before {
		t.Errorf("resident %d KiB before touching 1 MiB, %d after", before, after)
	}
}
