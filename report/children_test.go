package report

import (
	"testing"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/watchers"
)

// A spawned agent's own map is counted once: not beside its parent's map,
// whose lane holds its work, but alone when its parent is not there.
func TestSubagentSessionCountedOnce(t *testing.T) {
	parent, child, other := synthMap(11, 60), synthMap(12, 40), synthMap(13, 30)
	child.Session.Role, child.Session.ParentSessionID = "subagent", parent.Session.ID
	lanes := parent.Agents
	parent.Agents = append(lanes, mapfile.Agent{ID: watchers.LaneID(child.Session.NativeID())})
	total := func(maps ...*Map) int64 { return Usage(maps, Daily, time.UTC).Totals.Total }
	if total(parent, child, other) != total(parent)+total(other) {
		t.Errorf("usage of a parent, its spawned agent and another session: %d tokens, want the parent's and the other's %d",
			total(parent, child, other), total(parent)+total(other))
	}
	if total(child, other) != total(child)+total(other) || total(child) == 0 {
		t.Errorf("usage of a spawned agent without its parent's map: %d tokens, want %d", total(child, other), total(child)+total(other))
	}
	if n := len(countedOnce([]*Map{parent, child, other})); n != 2 {
		t.Errorf("the report lists %d sessions of a parent, its spawned agent and another; want 2", n)
	}
	// A parent whose map has no lane of it (a Cursor sub-composer, a
	// parent built without the child's log) does not hold its work.
	parent.Agents = lanes
	if n := len(countedOnce([]*Map{parent, child, other})); n != 3 {
		t.Errorf("a spawned agent whose parent's map has no lane of it is left out (%d sessions, want 3)", n)
	}
	orphan := synthMap(14, 20)
	orphan.Session.Role, orphan.Session.ParentSessionID = "subagent", "local:codex:gone"
	if n := len(countedOnce([]*Map{parent, orphan})); n != 2 {
		t.Errorf("a spawned agent whose parent has no map is left out (%d sessions, want 2)", n)
	}
}
