package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
)

// README.md documents every key of the default config file, and
// the commands it describes exist.
func TestOperationsDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	section := ""
	header := regexp.MustCompile(`^#?\s*\[([^\]]+)\]\s*$`)
	key := regexp.MustCompile(`^#?\s*([a-z_]+)\s*=`)
	var keys []string
	for _, l := range strings.Split(string(config.DefaultFile()), "\n") {
		if m := header.FindStringSubmatch(l); m != nil {
			section = m[1]
			if strings.HasPrefix(section, "prices.") {
				section = "prices.<model prefix>"
			}
			continue
		}
		m := key.FindStringSubmatch(l)
		if m == nil || m[1] == "exclude" && strings.HasPrefix(l, "# Example") {
			continue
		}
		k := m[1]
		if section != "" {
			k = section + "." + k
		}
		keys = append(keys, k)
	}
	if len(keys) < 20 {
		t.Fatalf("only %d keys found in the default file: %v", len(keys), keys)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if !strings.Contains(text, "| `"+k+"` |") {
			t.Errorf("README.md has no reference row for %s", k)
		}
	}
	for _, c := range commands() {
		switch c.name {
		case "install", "uninstall", "config", "status", "list", "show", "flush", "doctor":
			if !strings.Contains(text, "agentmap "+c.name) {
				t.Errorf("README.md does not describe agentmap %s", c.name)
			}
		}
	}
}

// TestExportSynopsesNameEveryFlag: the synopses of export, in
// docs/exports.md and in README.md's table of commands, name exactly the
// flags `agentmap export --help` lists, so a flag added to the command
// cannot be left out of them (--repo and --outcome were).
func TestExportSynopsesNameEveryFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := cmdExport(context.Background(), []string{"--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("export --help: exit %d: %s", code, stderr.String())
	}
	want := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`).FindAllStringSubmatch(stderr.String(), -1)
	if len(want) < 10 {
		t.Fatalf("only %d flags in export --help:\n%s", len(want), stderr.String())
	}
	read := func(name ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, name...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// docs/exports.md: the first fenced block of the page.
	_, page, _ := strings.Cut(read("docs", "exports.md"), "\n```\n")
	page, _, _ = strings.Cut(page, "\n```\n")
	// README.md: the row of export in the table of commands.
	row := regexp.MustCompile("(?m)^\\| `agentmap export [^`]*`").FindString(read("README.md"))
	for name, synopsis := range map[string]string{"docs/exports.md": page, "README.md": row} {
		if !strings.HasPrefix(strings.TrimPrefix(synopsis, "| `"), "agentmap export") {
			t.Errorf("%s: no synopsis of agentmap export found", name)
			continue
		}
		named := map[string]bool{}
		for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(synopsis, -1) {
			named[m[1]] = true
		}
		for _, m := range want {
			if !named[m[1]] {
				t.Errorf("%s: the synopsis of export leaves out --%s", name, m[1])
			}
			delete(named, m[1])
		}
		for f := range named {
			t.Errorf("%s: the synopsis of export names --%s, which the command does not take", name, f)
		}
	}
}
