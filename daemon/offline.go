package daemon

import (
	"os"
	"sort"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// OfflineStatus is what the state database says when no daemon runs: the
// same counters as a running daemon's Status, bytes behind measured from
// the files as they are now. Uptime, catch-up and the last error belong to
// a running daemon and stay empty.
func OfflineStatus(db *state.DB, dataDir string) (Status, error) {
	srcs, sessions, err := db.Load()
	if err != nil {
		return Status{}, err
	}
	st := Status{DataDir: dataDir, Export: exportStatus(db), Sink: sinkStatus(db), SkippedSessions: skippedSessions(srcs),
		State: earlierRepair(db, time.Now())}
	per := map[string]*AgentStatus{}
	get := func(agent string) *AgentStatus {
		a := per[agent]
		if a == nil {
			a = &AgentStatus{Agent: agent}
			per[agent] = a
		}
		return a
	}
	fed := map[string]bool{}
	tails := unfinishedTails{} // with the default cap on a line: no config is read here
	reg := registry(agents.All)
	for _, s := range srcs {
		a := get(s.Agent)
		a.Skipped += s.Skipped + s.Oversized
		fed[s.Session] = true
		if s.Missing {
			continue
		}
		if s.Form != formConversation {
			a.Files++
			if !parsedCurrent(s, reg) {
				if _, err := os.Stat(s.Path); err == nil {
					st.Reread++
				}
			}
		}
		if s.Form == watchers.FormLines {
			if fi, err := os.Stat(s.Path); err == nil && fi.Size() > s.Offset {
				a.Behind += tails.behind(nil, s, fi.Size(), 0)
			}
		}
	}
	st.LongLines = tails.longLines(0)
	for _, s := range sessions {
		if s.Flush != nil {
			if at := time.UnixMilli(s.Flush.AtMs); at.After(st.LastFlush) {
				st.LastFlush = at
			}
		}
		if !counted(s, func(key string) bool { return fed[key] }) {
			continue
		}
		if s.Dirty() {
			get(s.Agent).Live++
		} else {
			get(s.Agent).Flushed++
		}
	}
	for _, a := range per {
		st.Agents = append(st.Agents, *a)
	}
	sort.Slice(st.Agents, func(i, j int) bool { return st.Agents[i].Agent < st.Agents[j].Agent })
	return st, nil
}
