package daemon

import (
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// Logs read by an earlier build. The state keeps the events a log gave
// when it was read, and a map is built from them: a parser fixed since (a
// field it now reads, a count it now gets right) would otherwise change
// nothing for the history already read, and a user who upgrades would keep
// maps, costs and reports the new build no longer makes. So each source
// records the version of its agent's parser that read it
// (state.Source.Parsed, agents.Agent.Version), and a log still on disk
// whose version is not this build's is read again from its start, its
// events replaced in the commit of its first batch, as a log rewritten in
// place is (rebase): a crash before that commit leaves the old events and
// the old version, read again at the next start; one after it resumes at
// the committed cursor like any read.
//
// The re-read happens where the log is next visited: the first catch-up of
// a daemon or a scan (a session whose logs were all read by an earlier
// version is not let go of on load: quietSource), a change of the log
// later. Only a log whose bytes are all still there is read again: a
// tailed log that fails its checks (truncated, replaced, rewritten) is
// read again from its start anyway; a deleted log keeps what it gave, as
// there is nothing to read it from (status counts none of them). A
// downgrade reads again too: a map is what the running build makes of its
// logs.

// parsedCurrent reports whether the events s holds were made by the
// version of its agent's parser reg has (a source of an agent reg does not
// know is left as it is: nothing here could read it again).
func parsedCurrent(s *state.Source, reg map[string]agents.Agent) bool {
	a, ok := reg[s.Agent]
	return !ok || s.Parsed == a.Version
}

// registry indexes agents by name.
func registry(all []agents.Agent) map[string]agents.Agent {
	reg := make(map[string]agents.Agent, len(all))
	for _, a := range all {
		reg[a.Name] = a
	}
	return reg
}

// parserVersion is the version a source of the agent is stamped with when
// its events are replaced or added to by this build.
func (d *Daemon) parserVersion(agent string) int { return d.agents[agent].Version }

// toReread reports whether s is a log on disk an earlier build's parser
// read, which its next visit reads again. A conversation of a SQLite store
// is read again with its store (the store's source carries the version).
func (d *Daemon) toReread(s *state.Source) bool {
	return !s.Missing && s.Form != formConversation && !parsedCurrent(s, d.agents)
}

// rereadCount counts the sources of logs still to read again: those the
// roots hold (a log under a root no longer followed, or of an agent
// turned off, is never visited, and would be counted for ever).
func (d *Daemon) rereadCount() int {
	n := 0
	for _, s := range d.srcs {
		if d.toReread(s) && metByRoots(s, d.roots) {
			n++
		}
	}
	return n
}

// metByRoots reports whether the first root that meets s's path is one of
// s's agent.
func metByRoots(s *state.Source, roots []watchers.Root) bool {
	r, _, ok := firstMeeting(s.Path, roots)
	return ok && r.Agent == s.Agent
}

// noteRereads says once, after the load, how many logs an earlier build
// read are to be read again (a count: no path).
func (d *Daemon) noteRereads() {
	if n := d.rereadCount(); n > 0 {
		d.log.Info("logs read by an earlier version of their parser; reading them again from their start",
			"component", "daemon", "logs", n)
	}
}

// stampParsed sets the version of next, the record a commit writes for s:
// this build's when the commit replaces the source's events (reset) or
// adds to events this build's parser made; the recorded one otherwise.
func (d *Daemon) stampParsed(s *state.Source, next *state.Source, reset bool) {
	if reset || parsedCurrent(s, d.agents) {
		next.Parsed = d.parserVersion(s.Agent)
	}
}
