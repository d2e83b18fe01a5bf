package validate

import (
	"fmt"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// maxNameWords bounds the words of a name (model, tool, server, skill,
// subagent type, hook). Names are identifiers, not sentences; a few words
// are allowed because some tools name things with spaces.
const maxNameWords = 3

// nameFields are the fields of each section that hold names.
var (
	sessionNames = []string{"agentTool"}
	agentNames   = []string{"subagentType", "model"}
	eventNames   = []string{"tool", "server", "skill", "subagentType", "model", "stop",
		"hook", "hookEvent", "tracker", "name", "from", "to", "title", "version"}
)

// names checks that names look like names: a sentence in a model or tool
// field is text that found its way in.
func (c *checker) names(top map[string]any) {
	s := object(top["session"])
	for _, f := range sessionNames {
		c.name(s[f], "session", f)
	}
	for i, m := range array(s["models"]) {
		c.name(m, "session", "models", i)
	}
	for i, v := range array(top["agents"]) {
		a := object(v)
		for _, f := range agentNames {
			c.name(a[f], "agents", i, f)
		}
	}
	for i, v := range c.events {
		ev := object(v)
		for _, f := range eventNames {
			c.name(ev[f], "events", i, f)
		}
	}
	for i, v := range array(top["tasks"]) {
		t := object(v)
		name, ok := str(t["name"])
		if ok && t["source"] == "turns" && !turnName(name) {
			c.add(ptr("tasks", i, "name"), RuleIdentifier, "%s is not \"Turn N\" for a turns task", describe(name))
		}
	}
}

// name checks one name; the path is built only for a problem.
func (c *checker) name(v any, path ...any) {
	s, ok := str(v)
	if !ok {
		return
	}
	switch {
	case len(strings.Fields(s)) > maxNameWords:
		c.add(ptr(path...), RuleIdentifier, "%s is a sentence, not a name", describe(s))
	case event.Name(s) == "":
		// Words parted by a character that does not show (a zero-width
		// or no-break space), or past a name's length: the builder's own
		// gate (event.Name) writes none of these.
		c.add(ptr(path...), RuleIdentifier, "%s is not a name: too long, or with a blank or a character that does not show", describe(s))
	}
}

func turnName(s string) bool {
	var n int
	_, err := fmt.Sscanf(s, "Turn %d", &n)
	return err == nil && fmt.Sprintf("Turn %d", n) == s
}
