package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
)

// urlFileConfig writes a url_file holding a URL with a password, in mode
// perm, and a config naming it.
func urlFileConfig(t *testing.T, perm os.FileMode) (cfg, urlFile string) {
	t.Helper()
	dir := t.TempDir()
	urlFile = filepath.Join(dir, "team-db.url")
	if err := os.WriteFile(urlFile, []byte("postgres://agentmap_sink:the-url-files-password@127.0.0.1:1/agentmap?sslmode=disable\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(urlFile, perm); err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, filepath.Join(dir, "data"), "[sink.postgres]\nurl_file = \""+urlFile+"\"\n"), urlFile
}

// TestDoctorWarnsOfAURLFileOthersCanRead: a url_file its group or others
// can read (it holds the password) is a warning of doctor, naming the file
// and its mode and not what it holds; a 0600 one is fine.
func TestDoctorWarnsOfAURLFileOthersCanRead(t *testing.T) {
	privateHome(t)
	for perm, want := range map[os.FileMode]string{
		0o644: "warn sink sink.postgres.url_file %s can be read by its group or by others (mode 0644)",
		0o640: "warn sink sink.postgres.url_file %s can be read by its group or by others (mode 0640)",
		0o600: "ok sink sink.postgres.url_file %s is not readable by its group or others",
	} {
		cfg, urlFile := urlFileConfig(t, perm)
		_, out, errb := run(t, "doctor", "--json", "--config", cfg)
		var checks []check
		if err := json.Unmarshal([]byte(out), &checks); err != nil {
			t.Fatalf("doctor --json: %v\n%s%s", err, out, errb)
		}
		var got []string
		for _, c := range checks {
			if c.Topic == "sink" {
				got = append(got, c.Level+" "+c.Topic+" "+c.Msg)
			}
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], strings.Replace(want, "%s", urlFile, 1)) {
			t.Errorf("doctor on a url_file of mode %04o: %q", perm, got)
		}
		if strings.Contains(out+errb, "the-url-files-password") {
			t.Errorf("doctor shows what the url_file holds")
		}
	}
}

// TestSinkOptionsWarnOfAURLFileOthersCanRead: the daemon's sink settings
// carry the warning it logs when it starts, without what the file holds.
func TestSinkOptionsWarnOfAURLFileOthersCanRead(t *testing.T) {
	for perm, warns := range map[os.FileMode]bool{0o604: true, 0o600: false} {
		cfg, urlFile := urlFileConfig(t, perm)
		c, err := config.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		o := sinkOptions(c)
		if got := strings.Join(o.Warnings, "\n"); warns != strings.Contains(got, "sink.postgres.url_file "+urlFile+" can be read by its group or by others") ||
			strings.Contains(got, "the-url-files-password") {
			t.Errorf("the sink's warnings with a url_file of mode %04o: %q", perm, got)
		}
	}
}

// config check says the config is ok, and warns on stderr of a url_file
// others can read, without what it holds.
func TestConfigCheckWarnsOfAURLFileOthersCanRead(t *testing.T) {
	privateHome(t)
	for perm, warns := range map[os.FileMode]bool{0o644: true, 0o600: false} {
		cfg, urlFile := urlFileConfig(t, perm)
		code, out, errb := run(t, "config", "check", "--config", cfg)
		said := strings.Contains(errb, "agentmap config check: warning: sink.postgres.url_file "+urlFile+" can be read by its group or by others")
		if code != exitOK || !strings.Contains(out, ": ok") || said != warns || strings.Contains(out+errb, "the-url-files-password") {
			t.Errorf("config check of a url_file of mode %04o: exit %d, %q %q", perm, code, out, errb)
		}
	}
}
