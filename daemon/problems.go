package daemon

import (
	"sort"
	"sync"
	"time"

	"github.com/agentmap/agentmap/state"
)

// ConfigReloadError is the last reload of the config file that was
// rejected: the daemon kept the configuration in effect. A reload that
// succeeds clears it.
type ConfigReloadError struct {
	At   time.Time `json:"at"`
	Path string    `json:"path"`
	// Problems are the config's problems, each with its file, line and key.
	Problems []string `json:"problems"`
}

// SkippedSession is a session whose logs had lines that could not be used
// (or were over watch.max_line).
type SkippedSession struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Lines   int64  `json:"lines"`
}

// maxSkippedSessions bounds the list in a status: the worst ones first.
const maxSkippedSessions = 10

// configTrap keeps the last rejected reload, set from the reload goroutine.
type configTrap struct {
	mu   sync.Mutex
	last *ConfigReloadError
}

// ConfigRejected records a reload the daemon refused, for status.
func (d *Daemon) ConfigRejected(path string, problems []string) {
	d.configErr.mu.Lock()
	d.configErr.last = &ConfigReloadError{At: d.clock.Now(), Path: path, Problems: problems}
	d.configErr.mu.Unlock()
}

// ConfigAccepted clears the rejected reload once a reload succeeds.
func (d *Daemon) ConfigAccepted() {
	d.configErr.mu.Lock()
	d.configErr.last = nil
	d.configErr.mu.Unlock()
}

func (d *Daemon) lastConfigError() *ConfigReloadError {
	d.configErr.mu.Lock()
	defer d.configErr.mu.Unlock()
	return d.configErr.last
}

// skippedSessions attributes skipped lines to their sessions, the most
// skipped first, at most maxSkippedSessions of them.
func skippedSessions(srcs []*state.Source) []SkippedSession {
	per := map[string]*SkippedSession{}
	for _, s := range srcs {
		n := s.Skipped + s.Oversized
		if n == 0 || s.Session == "" {
			continue
		}
		if per[s.Session] == nil {
			per[s.Session] = &SkippedSession{Session: s.Session, Agent: s.Agent}
		}
		per[s.Session].Lines += n
	}
	out := make([]SkippedSession, 0, len(per))
	for _, s := range per {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Lines != out[j].Lines {
			return out[i].Lines > out[j].Lines
		}
		return out[i].Session < out[j].Session
	})
	return out[:min(len(out), maxSkippedSessions)]
}
