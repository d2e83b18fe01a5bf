package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentmap/agentmap/e2e/fakemcp"
)

// mcpEnv makes the test binary an MCP server on stdio: the clients start
// it as their MCP server, so the suite needs no other executable.
const mcpEnv = "AGENTMAP_E2E_MCP_SERVER"

// mcpTools are the scripted MCP tools; their outputs are scripted text.
var mcpTools = []fakemcp.Tool{
	{Name: "lookup", Output: canary + "-mcp output"},
	{Name: "broken", Output: canary + "-mcp failure", Fail: true},
}

func TestMain(m *testing.M) {
	if name := os.Getenv(mcpEnv); name != "" {
		if err := fakemcp.Serve(os.Stdin, os.Stdout, name, mcpTools); err != nil {
			fmt.Fprintln(os.Stderr, "mcp server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mcpCommand is the command line that starts the MCP server.
func mcpCommand(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
