package e2e

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// netnsEnv is set in the copy of the test that runs inside the private
// network namespace.
const netnsEnv = "AGENTMAP_E2E_IN_NETNS"

// TestClients is the whole suite: the clients, the servers and the daemon
// run together in one private network namespace, where only loopback
// exists, so nothing the clients try can leave the machine.
func TestClients(t *testing.T) {
	if os.Getenv("AGENTMAP_E2E") != "1" {
		t.Skip("SKIP real-clients suite: set AGENTMAP_E2E=1 or run e2e/run.sh")
	}
	bin := os.Getenv("AGENTMAP_E2E_BIN")
	if bin == "" {
		t.Skip("SKIP real-clients suite: AGENTMAP_E2E_BIN (node_modules/.bin with claude and codex) is not set; run e2e/run.sh")
	}
	for _, c := range strings.Split(clientList(), ",") {
		found := false
		for _, dir := range filepath.SplitList(bin) {
			if _, err := os.Stat(filepath.Join(dir, c)); err == nil {
				found = true
			}
		}
		if !found {
			t.Skipf("SKIP real-clients suite: %s is not installed in %s", c, bin)
		}
	}
	if os.Getenv(netnsEnv) == "" && os.Getenv("AGENTMAP_E2E_NETNS") != "off" {
		reexecInNetns(t)
		return
	}
	runSuite(t, bin)
}

// reexecInNetns runs this test again inside `unshare --net`, with loopback
// up, and reports its outcome.
func reexecInNetns(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("SKIP real-clients suite: unshare is not available (AGENTMAP_E2E_NETNS=off runs without a private network)")
	}
	// Root gets a network namespace directly; others through a user
	// namespace of their own, where they are root.
	flags := []string{"--net"}
	if exec.Command("unshare", "--net", "true").Run() != nil {
		flags = []string{"--user", "--map-root-user", "--net"}
		if err := exec.Command("unshare", "--user", "--map-root-user", "--net", "true").Run(); err != nil {
			t.Skipf("SKIP real-clients suite: unshare --net is not permitted here (%v); AGENTMAP_E2E_NETNS=off runs without a private network", err)
		}
	}
	args := append(flags, "sh", "-c", `ip link set lo up 2>/dev/null || ifconfig lo up; exec "$0" "$@"`,
		os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count", "1")
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(t.Context(), "unshare", args...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &buf)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	out := buf.Bytes()
	if err != nil {
		t.Fatalf("suite in the private network namespace failed: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("SKIP: the suite skipped inside the namespace (see above)")
	}
}
