package config

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

func TestLoadOrCreateHashKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	path := filepath.Join(dir, "hash.key")
	key, err := LoadOrCreateHashKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != HashKeySize || bytes.Equal(key, make([]byte, HashKeySize)) {
		t.Fatalf("key of %d bytes: %x", len(key), key)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("%s has mode %o, want %o", p, got, want)
			}
		}
	}
	again, err := LoadOrCreateHashKey(path)
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second call gave %x, %v; want the same key", again, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".hash-key-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestHashKeyRaceGivesOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hash.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadOrCreateHashKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent creation gave different keys")
		}
	}
}

func TestHashKeyFromFile(t *testing.T) {
	dir := t.TempDir()
	raw := bytes.Repeat([]byte{0xab}, 20)
	hexPath := filepath.Join(dir, "hex.key")
	os.WriteFile(hexPath, []byte(hex.EncodeToString(raw)+"\n"), 0o600)
	if k, err := LoadOrCreateHashKey(hexPath); err != nil || !bytes.Equal(k, raw) {
		t.Errorf("hex key read as %x, %v", k, err)
	}
	short := filepath.Join(dir, "short.key")
	os.WriteFile(short, []byte("tiny"), 0o600)
	if _, err := LoadOrCreateHashKey(short); err == nil {
		t.Error("a 4-byte key was accepted")
	} else if bytes.Contains([]byte(err.Error()), []byte("tiny")) {
		t.Errorf("error quotes the key: %v", err)
	}
}
