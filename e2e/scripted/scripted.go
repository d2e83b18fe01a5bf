// Package scripted is what the scripted model servers of the end-to-end
// suite (fakeanthropic, fakeopenai, fakechat, fakegemini) have in common:
// how a request finds its script and step, and the ledger of what was
// answered, which the tests compare with the maps.
//
// Each server speaks one provider's wire API; none keeps conversation
// state. A request names its script by a marker in a user prompt
// ("[[script:NAME]]"), and its step by the ids of the tool results it
// carries: every call id a server hands out encodes script, step and call
// number. Parallel subagents, resumed sessions and client retries thus all
// find their place.
package scripted

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var marker = regexp.MustCompile(`\[\[script:([a-z0-9-]+)\]\]`)

// ScriptIn returns the script that the last marker in text names.
func ScriptIn(text string) (string, bool) {
	sm := marker.FindAllStringSubmatch(text, -1)
	if sm == nil {
		return "", false
	}
	return sm[len(sm)-1][1], true
}

// ID is the id of call n of a script's step: prefix, then the script's
// name without dashes (ids are split on "_"), step and n.
func ID(prefix, script string, step, n int) string {
	return fmt.Sprintf("%s%s_%d_%d", prefix, strings.ReplaceAll(script, "-", ""), step, n)
}

// ParseID reverses ID: the script among scripts and the step an id names.
func ParseID[R any](id, prefix string, scripts map[string][]R) (string, int, bool) {
	parts := strings.Split(strings.TrimPrefix(id, prefix), "_")
	if len(parts) != 3 {
		return "", 0, false
	}
	step, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, false
	}
	for name := range scripts {
		if strings.ReplaceAll(name, "-", "") == parts[0] {
			return name, step, true
		}
	}
	return "", 0, false
}

// Served records one answered request of a script, in the usage figures
// of the server's API.
type Served[U any] struct {
	Script string
	Step   int
	Model  string
	Usage  U
	Tools  []string
}

// Ledger is what a server answered. Its zero value is ready; it is safe
// for the concurrent requests of parallel subagents.
type Ledger[U any] struct {
	mu         sync.Mutex
	served     []Served[U]
	unscripted int
	offered    []string
	failed     map[string]bool
	answers    int
}

// Served returns the answered scripted requests in order.
func (l *Ledger[U]) Served() []Served[U] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Served[U](nil), l.served...)
}

// Unscripted is the number of requests that belonged to no script (the
// client's own side work: titles, summaries, topic checks).
func (l *Ledger[U]) Unscripted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unscripted
}

// Offered returns the tool names the client offered in its last scripted
// request.
func (l *Ledger[U]) Offered() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.offered...)
}

// FailFirst says whether this attempt at a script's step is the first one,
// which a reply scripted to fail once must fail: true exactly once per step.
func (l *Ledger[U]) FailFirst(script string, step int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := fmt.Sprintf("%s/%d", script, step)
	if l.failed[key] {
		return false
	}
	if l.failed == nil {
		l.failed = map[string]bool{}
	}
	l.failed[key] = true
	return true
}

// Answer records a scripted answer and the tools the request offered, and
// returns the answer's number (from 1), for the response id.
func (l *Ledger[U]) Answer(s Served[U], offered []string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.served = append(l.served, s)
	l.offered = append(l.offered[:0], offered...)
	l.answers++
	return l.answers
}

// Side records an answer to a request of no script and returns its number.
func (l *Ledger[U]) Side() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unscripted++
	l.answers++
	return l.answers
}
