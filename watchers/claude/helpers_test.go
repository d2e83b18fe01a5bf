package claude

import "github.com/agentmap/agentmap/watchers"

func sourceFor(session string) watchers.Source {
	return watchers.Source{Agent: Agent, Session: session}
}
