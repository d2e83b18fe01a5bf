package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// shownMatches is how many of the sessions an ambiguous id prefix matches
// its error names.
const shownMatches = 5

// ambiguousPrefix is the error of an id prefix that matches more than one
// session. It names them as agent/id, up to shownMatches of them, in the
// order given, so that the next try can copy one; a session id is the
// name of its log file, nothing the maps keep back. rest, when some are
// left out, says where to see them all.
func ambiguousPrefix(prefix string, keys []string, rest string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the id prefix %q matches %d sessions; give more of it:", prefix, len(keys))
	shown := keys
	if len(keys) > shownMatches+1 { // "…and 1 more" would take the line the last one needs
		shown = keys[:shownMatches]
	}
	for _, k := range shown {
		b.WriteString("\n  " + k)
	}
	if n := len(keys) - len(shown); n > 0 {
		fmt.Fprintf(&b, "\n  …and %d more", n)
		if rest != "" {
			b.WriteString(" (" + rest + ")")
		}
	}
	return errors.New(b.String())
}

// errNoSessionMatch is sessionMatch's error when no session's id is or
// starts with the one given.
var errNoSessionMatch = errors.New("no session matches that id")

// sessionMatch finds the session build --session names among those the
// plans find: the one of that id, else the one whose id it is a unique
// prefix of, as show and report --session take one.
type sessionMatch struct {
	want   string
	exact  bool
	prefix map[string]string // native id → agent/id, of the sessions want is a prefix of
}

func newSessionMatch(want string) *sessionMatch {
	return &sessionMatch{want: want, prefix: map[string]string{}}
}

// add looks at the sessions of a plan.
func (m *sessionMatch) add(pl *buildPlan) {
	for i := range pl.sessions {
		s := &pl.sessions[i]
		switch id := pl.strs.get(s.native); {
		case id == m.want:
			m.exact = true
		case strings.HasPrefix(id, m.want):
			if _, ok := m.prefix[id]; !ok {
				m.prefix[id] = pl.agents[s.agent] + "/" + id
			}
		}
	}
}

// id is the native id of the sessions to build: want when a session has
// it, else the only id it is a prefix of. A prefix of several is an error
// that lists them (ambiguousPrefix); none, errNoSessionMatch.
func (m *sessionMatch) id() (string, error) {
	switch {
	case m.exact:
		return m.want, nil
	case len(m.prefix) == 0:
		return "", errNoSessionMatch
	case len(m.prefix) == 1:
		for id := range m.prefix {
			return id, nil
		}
	}
	keys := make([]string, 0, len(m.prefix))
	for _, k := range m.prefix {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "", ambiguousPrefix(m.want, keys, "")
}
