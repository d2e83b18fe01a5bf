package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
)

// nowhereSink is a [sink.postgres] table whose server is not there (a port
// nothing listens on): every attempt fails at once.
const nowhereSink = "[sink.postgres]\nurl = \"postgres://agentmap_sink@127.0.0.1:1/agentmap?sslmode=disable&connect_timeout=2\"\ndevice = \"here\"\n"

// writeConfig writes a config file with data_dir and the lines given.
func writeConfig(t *testing.T, dataDir, lines string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("version = 1\ndata_dir = %q\n%s", dataDir, lines)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSinkStatusBeforeTheDaemonStartedWithIt: a config with [sink.postgres]
// in a data directory whose daemon has not started with it yet (the state
// has no queue) is a team database configured and not started, not one
// that is not configured.
func TestSinkStatusBeforeTheDaemonStartedWithIt(t *testing.T) {
	privateHome(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(daemon.StatePath(data), nil) // a daemon ran here without the sink
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := writeConfig(t, data, nowhereSink)
	code, out, errb := run(t, "sink", "status", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "team database: configured, but the daemon has not started with it yet") || strings.Contains(out, "not configured") {
		t.Errorf("sink status with [sink.postgres] before a daemon started with it: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "sink", "status", "--json", "--config", cfg)
	if code != exitOK || strings.Join(strings.Fields(out), "") != `{"configured":true,"started":false}` {
		t.Errorf("sink status --json with [sink.postgres] before a daemon started with it: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "sink", "status", "--config", writeConfig(t, data, ""))
	if code != exitOK || !strings.Contains(out, "team database: not configured") {
		t.Errorf("sink status without [sink.postgres]: exit %d\n%s%s", code, out, errb)
	}
	// Held by another process (a scan): not known now, neither "not
	// started" nor "not configured".
	held, err := state.Open(daemon.StatePath(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	code, out, errb = run(t, "sink", "status", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "team database: not known now: another agentmap process (a scan) holds") {
		t.Errorf("sink status while the state is held: exit %d\n%s%s", code, out, errb)
	}
	code, out, errb = run(t, "sink", "status", "--json", "--config", cfg)
	if code != exitOK || strings.Join(strings.Fields(out), "") != `{"configured":true,"locked":true}` {
		t.Errorf("sink status --json while the state is held: exit %d\n%s%s", code, out, errb)
	}
}

// TestSinkStatusAfterAScanThatCouldNotSend: what a one-shot scan could not
// send waits for the next scan or the daemon's start: with no daemon
// running, status says so, not that it is being retried.
func TestSinkStatusAfterAScanThatCouldNotSend(t *testing.T) {
	home := homeWithASession(t)
	cfg := writeConfig(t, filepath.Join(home, "data"), nowhereSink)
	if code, _, errb := run(t, "scan", "--config", cfg, "--root", "claude="+filepath.Join(home, "logs")); code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, errb)
	}
	code, out, errb := run(t, "sink", "status", "--config", cfg)
	t.Logf("sink status after the scan:\n%s", out)
	if code != exitOK || !strings.Contains(out, "1 queued") || !strings.Contains(out, "(1 failed attempt; no daemon is sending: tried again at the next agentmap scan, or when the daemon starts)") ||
		strings.Contains(out, "retrying") {
		t.Fatalf("sink status after a scan that could not send: exit %d\n%s%s", code, out, errb)
	}
	code, out, _ = run(t, "sink", "status", "--json", "--config", cfg)
	var st struct {
		Started  bool `json:"started"`
		Failures int  `json:"failures"`
		Sending  bool `json:"sending"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || !st.Started || st.Failures != 1 || st.Sending {
		t.Fatalf("sink status --json after a scan that could not send: %s", out)
	}
	// The config loses its [sink.postgres]: the queue stays in the state,
	// but nothing will send it; status says so rather than "1 queued" as
	// if it were on its way.
	off := writeConfig(t, filepath.Join(home, "data"), "")
	const says = "team db:    not configured ([sink.postgres] in the config has no url or url_file): 1 session queued, not sent until one is (0 sessions sent before)\n"
	for _, cmd := range [][]string{{"status", "--no-service"}, {"sink", "status"}} {
		code, out, errb := run(t, append(cmd, "--config", off)...)
		if code != exitOK || !strings.Contains(out, says) || strings.Contains(out, "failed attempt") {
			t.Errorf("%v without [sink.postgres]: exit %d\n%s%s", cmd, code, out, errb)
		}
	}
	var offSt struct {
		Configured bool `json:"configured"`
		Off        bool `json:"off"`
		Queue      int  `json:"queue"`
	}
	code, out, _ = run(t, "sink", "status", "--json", "--config", off)
	if code != exitOK || json.Unmarshal([]byte(out), &offSt) != nil || offSt.Configured || !offSt.Off || offSt.Queue != 1 {
		t.Errorf("sink status --json without [sink.postgres]: %s", out)
	}
	var full struct {
		Sink struct {
			Off bool `json:"off"`
		} `json:"sink"`
	}
	code, out, _ = run(t, "status", "--json", "--no-service", "--config", off)
	if code != exitOK || json.Unmarshal([]byte(out), &full) != nil || !full.Sink.Off {
		t.Errorf("status --json without [sink.postgres]: %s", out)
	}
}

// Without a running daemon, status does not know how many logs
// privacy.exclude keeps out (a daemon counts them as it reads their first
// records; the state keeps nothing of them): --json leaves the count out
// rather than say 0 after a scan that forgot the sessions it covers.
func TestStatusWithoutADaemonLeavesExcludedOut(t *testing.T) {
	home := homeWithASession(t)
	root := "claude=" + filepath.Join(home, "logs")
	data := filepath.Join(home, "data")
	if code, _, errb := run(t, "scan", "--config", writeConfig(t, data, ""), "--root", root); code != exitOK {
		t.Fatalf("scan: exit %d\n%s", code, errb)
	}
	cfg := writeConfig(t, data, "[privacy]\nexclude = [\"**\"]\n")
	if code, _, errb := run(t, "scan", "--config", cfg, "--root", root); code != exitOK {
		t.Fatalf("scan with privacy.exclude: exit %d\n%s", code, errb)
	}
	code, out, errb := run(t, "status", "--json", "--no-service", "--config", cfg)
	var st map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json: exit %d\n%s%s", code, out, errb)
	}
	if n, ok := st["excluded"]; ok {
		t.Errorf("status --json without a daemon says excluded %v, which it cannot know", n)
	}
}

// homeWithASession is a private home whose logs/ holds the fixture's
// Claude Code session, as a root given with --root claude=HOME/logs.
func homeWithASession(t *testing.T) string {
	t.Helper()
	home := privateHome(t)
	proj := filepath.Join(home, "logs", "projects", "-w-api")
	os.MkdirAll(proj, 0o700)
	log, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "session.jsonl"), log, 0o600)
	return home
}

// TestSinkSettingsThatCannotBeUsedStopNoCapture: a password_env that is
// not set (as under a service, which has not the shell's environment) or a
// url_file that is not there stops the team database alone: scan writes
// its maps and exits 0, warning that the team database gets nothing; the
// queue keeps the map and sink status gives the reason; config check,
// doctor and install say it beforehand.
func TestSinkSettingsThatCannotBeUsedStopNoCapture(t *testing.T) {
	for name, tc := range map[string]struct{ lines, why string }{
		"password_env": {"[sink.postgres]\nurl = \"postgres://agentmap_sink@127.0.0.1:1/agentmap?sslmode=disable\"\npassword_env = \"AGENTMAP_TEST_UNSET_PW\"\n",
			"sink.postgres.password_env: AGENTMAP_TEST_UNSET_PW is not set"},
		"url_file": {"[sink.postgres]\nurl_file = \"/nonexistent/team-db.url\"\n", "sink.postgres.url_file: "},
	} {
		t.Run(name, func(t *testing.T) {
			home := homeWithASession(t)
			t.Setenv("AGENTMAP_TEST_UNSET_PW", "")
			os.Unsetenv("AGENTMAP_TEST_UNSET_PW")
			cfg := writeConfig(t, filepath.Join(home, "data"), tc.lines)
			code, _, errb := run(t, "scan", "--config", cfg, "--root", "claude="+filepath.Join(home, "logs"))
			if code != exitOK || !strings.Contains(errb, "warning: the team database gets nothing: "+tc.why) {
				t.Fatalf("scan: exit %d\n%s", code, errb)
			}
			maps, _ := filepath.Glob(filepath.Join(home, "data", "maps", "*", "*", "*", "*.json.gz"))
			if len(maps) != 1 {
				t.Errorf("scan wrote %d maps, want 1", len(maps))
			}
			code, out, errb := run(t, "sink", "status", "--config", cfg)
			if code != exitOK || !strings.Contains(out, "1 queued") || !strings.Contains(out, tc.why) {
				t.Errorf("sink status: exit %d\n%s%s", code, out, errb)
			}
			if _, _, errb := run(t, "config", "check", "--config", cfg); !strings.Contains(errb, "warning: "+tc.why) {
				t.Errorf("config check says nothing of it: %q", errb)
			}
			if _, out, _ := run(t, "doctor", "--config", cfg); !strings.Contains(out, tc.why) {
				t.Errorf("doctor says nothing of it:\n%s", out)
			}
		})
	}
	// Set here, password_env is still one the service will not have.
	t.Setenv("AGENTMAP_TEST_PW", "secret-pw")
	cfg := writeConfig(t, filepath.Join(t.TempDir(), "data"),
		"[sink.postgres]\nurl = \"postgres://agentmap_sink@127.0.0.1:1/agentmap?sslmode=disable\"\npassword_env = \"AGENTMAP_TEST_PW\"\n")
	_, out, errb := run(t, "install", "--dry-run", "--config", cfg)
	if !strings.Contains(errb, "warning: sink.postgres.password_env names $AGENTMAP_TEST_PW, which the service does not have") || strings.Contains(out+errb, "secret-pw") {
		t.Errorf("install --dry-run with a password_env:\n%s%s", out, errb)
	}
}

// A URL that holds its password needs no password_env: the variable unset
// (as under a service) leaves the team database usable, and nothing warns;
// doctor names a url_file that is not there before a password_env.
func TestPasswordEnvBesideAURLsOwnPassword(t *testing.T) {
	privateHome(t)
	os.Unsetenv("AGENTMAP_TEST_UNSET_PW")
	cfg := writeConfig(t, filepath.Join(t.TempDir(), "data"),
		"[sink.postgres]\nurl = \"postgres://agentmap_sink:urlpw@127.0.0.1:1/agentmap?sslmode=disable\"\npassword_env = \"AGENTMAP_TEST_UNSET_PW\"\n")
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o := sinkOptions(c); o.Unusable != nil {
		t.Errorf("a URL with its own password, password_env unset: %v", o.Unusable)
	}
	if _, out, errb := run(t, "doctor", "--config", cfg); strings.Contains(out+errb, "password_env") {
		t.Errorf("doctor warns of a password_env the URL does not need:\n%s%s", out, errb)
	}
	t.Setenv("AGENTMAP_TEST_PW", "pw")
	missing := filepath.Join(t.TempDir(), "team-db.url")
	cfg = writeConfig(t, filepath.Join(t.TempDir(), "data"),
		"[sink.postgres]\nurl_file = \""+missing+"\"\npassword_env = \"AGENTMAP_TEST_PW\"\n")
	if _, out, _ := run(t, "doctor", "--config", cfg); !strings.Contains(out, "sink.postgres.url_file: stat "+missing+": no such file or directory") {
		t.Errorf("doctor on a url_file not there, beside a password_env:\n%s", out)
	}
}
