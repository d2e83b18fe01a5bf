package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Every module the binary links, and the standard library, is in the
// notices with its version and the text of its license files.
func TestNoticesCoverEveryLinkedModule(t *testing.T) {
	mods, err := linkedModules("github.com/agentmap/agentmap/cmd/agentmap", runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 2 || mods[0].Path != "Go standard library" {
		t.Fatalf("modules: %v", mods)
	}
	paths := map[string]bool{}
	for _, m := range mods {
		paths[m.Path] = true
	}
	// Modules the binary cannot be without (the state, the watcher, the
	// command line): a go list that lost them would pass unseen.
	for _, want := range []string{"go.etcd.io/bbolt", "github.com/fsnotify/fsnotify", "github.com/spf13/cobra"} {
		if !paths[want] {
			t.Errorf("%s is not among the linked modules", want)
		}
	}
	text, err := notices(mods)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for _, m := range mods {
		if !strings.Contains(s, "\n"+m.Path+" "+m.Version+"\n") {
			t.Errorf("no heading for %s %s", m.Path, m.Version)
		}
	}
	// The texts themselves, not only the names: bbolt's MIT grant, the
	// Go authors' BSD terms, and the MIT notice of the xxhash that
	// klauspost/compress copied into a folder of its own.
	for _, want := range []string{"Permission is hereby granted, free of charge", "Redistributions of source code must retain", "Additional IP Rights Grant (Patents)",
		"--- zstd/internal/xxhash/LICENSE.txt ---", "Copyright (c) 2016 Caleb Spare"} {
		if !strings.Contains(s, want) {
			t.Errorf("the notices lack %q", want)
		}
	}
}

// A module with no license file stops the notices, naming it: a release
// must not ship a dependency without its notice.
func TestModuleWithoutLicenseIsAnError(t *testing.T) {
	bare, licensed := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(bare, "README.md"), []byte("no license here\n"), 0o644)
	os.WriteFile(filepath.Join(licensed, "LICENSE-MIT"), []byte("MIT terms\n"), 0o644)
	os.Mkdir(filepath.Join(licensed, "LICENSES"), 0o755) // a folder is no file
	// A license only in a sub-folder is code copied in, not the module's.
	os.MkdirAll(filepath.Join(bare, "internal", "copied"), 0o755)
	os.WriteFile(filepath.Join(bare, "internal", "copied", "LICENSE"), []byte("copied\n"), 0o644)
	os.WriteFile(filepath.Join(licensed, "license.go"), []byte("package x\n"), 0o644) // source, not a license
	_, err := notices([]module{{Path: "example.com/licensed", Version: "v1.0.0", Dir: licensed}, {Path: "example.com/bare", Version: "v0.1.0", Dir: bare, pkgDirs: []string{filepath.Join(bare, "internal", "copied")}}})
	if err == nil || !strings.Contains(err.Error(), "example.com/bare") || strings.Contains(err.Error(), "example.com/licensed") {
		t.Fatalf("err = %v, want one naming example.com/bare alone", err)
	}
	text, err := notices([]module{{Path: "example.com/licensed", Version: "v1.0.0", Dir: licensed}})
	if err != nil || !strings.Contains(string(text), "--- LICENSE-MIT ---\n\nMIT terms\n") || strings.Contains(string(text), "license.go") {
		t.Fatalf("err = %v, text:\n%s", err, text)
	}
}

// Another platform's build is listed, not the host's: cobra links
// github.com/inconshreveable/mousetrap on Windows alone.
func TestNoticesOfAnotherPlatform(t *testing.T) {
	paths := func(goos string) []string {
		mods, err := linkedModules("github.com/agentmap/agentmap/cmd/agentmap", goos, "amd64")
		if err != nil {
			t.Fatal(err)
		}
		var p []string
		for _, m := range mods {
			p = append(p, m.Path)
		}
		return p
	}
	const windowsOnly = "github.com/inconshreveable/mousetrap"
	if win := paths("windows"); !slices.Contains(win, windowsOnly) {
		t.Errorf("windows/amd64 modules lack %s: %v", windowsOnly, win)
	}
	if linux := paths("linux"); slices.Contains(linux, windowsOnly) {
		t.Errorf("linux/amd64 modules name %s: %v", windowsOnly, linux)
	}
}
