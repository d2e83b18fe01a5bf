package main

import (
	"bytes"
	"context"
	"io"
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

// TestSynopsesNameEveryFlag: the synopses of export, report and usage (the
// usage line of their --help, the first fenced block of their page in
// docs/, their row in README.md's table of commands) name exactly the flags
// their --help lists, so that a flag added to a command cannot be left out
// of them (export's --repo and --outcome, usage's --outcome, --maps,
// --from and --device were).
func TestSynopsesNameEveryFlag(t *testing.T) {
	read := func(name ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, name...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// block is the fenced block of page that starts with the command.
	block := func(page, command string) string {
		for _, b := range strings.Split(read("docs", page), "```")[1:] {
			if b = strings.TrimPrefix(strings.TrimPrefix(b, "sh"), "\n"); strings.HasPrefix(b, command+" ") {
				return b
			}
		}
		return ""
	}
	flagsIn := regexp.MustCompile(`(?:^|[\s\[|])--?([a-z][a-z-]*)`)
	for _, c := range []struct {
		name string
		run  func(context.Context, []string, io.Writer, io.Writer) int
		page string
	}{{"export", cmdExport, "exports.md"}, {"report", cmdReport, "report.md"}, {"usage", cmdUsage, "report.md"}} {
		var stdout, stderr bytes.Buffer
		if code := c.run(context.Background(), []string{"--help"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("%s --help: exit %d: %s", c.name, code, stderr.String())
		}
		help := stderr.String()
		want := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`).FindAllStringSubmatch(help, -1)
		if len(want) < 8 {
			t.Fatalf("only %d flags in %s --help:\n%s", len(want), c.name, help)
		}
		command := "agentmap " + c.name
		usageLine, _, _ := strings.Cut(help, "\n")
		row := regexp.MustCompile("(?m)^\\| `" + command + " [^`]*`").FindString(read("README.md"))
		for where, synopsis := range map[string]string{"docs/" + c.page: block(c.page, command), "README.md": row, "--help": usageLine} {
			if !strings.Contains(synopsis, command+" ") {
				t.Errorf("%s: no synopsis of %s found", where, command)
				continue
			}
			named := map[string]bool{}
			for _, m := range flagsIn.FindAllStringSubmatch(strings.ReplaceAll(synopsis, "\\|", "|"), -1) {
				named[m[1]] = true
			}
			for _, m := range want {
				if !named[m[1]] {
					t.Errorf("%s: the synopsis of %s leaves out --%s", where, c.name, m[1])
				}
				delete(named, m[1])
			}
			for f := range named {
				t.Errorf("%s: the synopsis of %s names --%s, which the command does not take", where, c.name, f)
			}
		}
	}
}
