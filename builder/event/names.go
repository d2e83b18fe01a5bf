package event

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode"
	"unicode/utf8"

	"github.com/agentmap/agentmap/internal/swar"
)

// MaxName bounds a name in bytes: a host name may take 253.
const MaxName = 256

// maxNameSpaces is how many spaces a name may hold: the format page's
// names are identifiers, and the validator allows three words because
// some tools name things with spaces.
const maxNameSpaces = 2

// Name returns s when it has the shape of a name (a tool, model, MCP
// server, skill, subagent type, hook, host, verb or id), "" when it could
// be text: more than MaxName bytes, invalid UTF-8, more than three words
// or words parted by anything but one ASCII space, or a character that
// does not show (a control or format character such as a zero-width
// space, another blank such as a no-break space, a filler). Those are
// the ways a sentence passes for one word.
//
// Each parser keeps its own, stricter filter for what its agent's names
// look like; Name is the gate every event passes on its way into a map and
// the state database, so that a parser that forgets a filter leaks no
// text (Scrub).
func Name(s string) string {
	if len(s) > MaxName {
		return ""
	}
	spaces := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ':
				// No space first, last or after another: each would be
				// a word of nothing, and a sentence can hide in the gaps.
				if i == 0 || i == len(s)-1 || s[i-1] == ' ' {
					return ""
				}
				if spaces++; spaces > maxNameSpaces {
					return ""
				}
			case c < ' ' || c == 0x7f:
				return ""
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || Hidden(r) {
			return ""
		}
		i += n
	}
	return s
}

// Hidden reports whether r is a character that does not show, or shows
// as a blank: a space other than ASCII's, a control or format character
// (zero-width spaces and joiners, bidirectional marks), a filler.
func Hidden(r rune) bool {
	switch r {
	case 0x115f, 0x1160, 0x3164, 0xffa0, 0x2800: // Hangul fillers, the blank braille pattern
		return true
	}
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Scrub returns evs with every name that fails Name set to "" and every
// id that fails ID replaced by a digest (opaqueID): evs itself
// when all pass (the rule case), else a copy, whose changed records are
// copies too (evs may be shared, with a map being built from it). A
// cleared name reads as one the log never gave: the builder writes
// "unknown" where the format needs one.
func Scrub(evs []Event) []Event {
	first := -1
	for i := range evs {
		if !clean(&evs[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return evs
	}
	out := make([]Event, len(evs))
	copy(out, evs)
	for i := first; i < len(out); i++ {
		if !clean(&out[i]) {
			scrub(&out[i])
		}
	}
	return out
}

// names calls f with a pointer to each name of e, and whether it is an
// id, stopping when f returns false. The pointers are into e and its
// records. A repository's name and key are not among them: they come from
// the path redaction (builder/redact), which names a repository by its
// directory or remote, spaces and all.
func names(e *Event, f func(s *string, id bool) bool) bool {
	n := func(ss ...*string) bool {
		for _, s := range ss {
			if !f(s, false) {
				return false
			}
		}
		return true
	}
	id := func(ss ...*string) bool {
		for _, s := range ss {
			if !f(s, true) {
				return false
			}
		}
		return true
	}
	if !id(&e.Agent) || !n(&e.Model) {
		return false
	}
	if s := e.Session; s != nil && !(id(&s.NativeID, &s.ParentNativeID) && n(&s.AgentTool, &s.Role, &s.AgentVersion)) {
		return false
	}
	if l := e.LLM; l != nil && !(id(&l.MsgID) && n(&l.Side, &l.Stop)) {
		return false
	}
	if c := e.Call; c != nil {
		if !(id(&c.ID, &c.Continues) && n(&c.Tool, &c.Kind, &c.Cat, &c.Verb, &c.Server, &c.MCPTool,
			&c.Skill, &c.SubagentType, &c.SubagentModel, &c.Host, &c.SkillWrite)) {
			return false
		}
		if v := c.VCS; v != nil && !n(&v.Provider, &v.Action, &v.Repo) {
			return false
		}
	}
	if x := e.Result; x != nil {
		if !(id(&x.CallID, &x.Child) && n(&x.ErrClass)) {
			return false
		}
		if p := x.PR; p != nil && !n(&p.Action, &p.Provider, &p.Repo) {
			return false
		}
		if t := x.Ticket; t != nil && !(n(&t.Tracker, &t.Action) && id(&t.ID)) {
			return false
		}
		if a := x.Artifact; a != nil && !n(&a.Version) {
			return false
		}
	}
	if r := e.Error; r != nil && !(n(&r.Source, &r.Class, &r.Hook, &r.HookEvent) && id(&r.SrcUUID, &r.RefCallID)) {
		return false
	}
	if p := e.Compact; p != nil && !n(&p.Trigger) {
		return false
	}
	if l := e.Lane; l != nil && !(n(&l.SubagentType) && id(&l.LaunchCallID)) {
		return false
	}
	if t := e.Total; t != nil {
		for i := range t.Models {
			if !n(&t.Models[i].Model) {
				return false
			}
		}
	}
	return true
}

// ID returns s when it has the shape of an id: printable ASCII without a
// space, at most MaxName bytes (every agent's ids are uuids, call ids and
// the like); "" as it is; else opaqueID's digest of it. Stricter than
// Name, which lets a name have three words: an id names a map file, a
// state record and a log line's session, where three words of a log's
// text would be kept. The daemon keys sessions by it too, so that a key
// and its map's id agree.
func ID(s string) string {
	if okID(s) {
		return s
	}
	return opaqueID(s)
}

// okID reports whether s is empty or has the shape of an id (ID).
func okID(s string) bool {
	if s == "" {
		return true
	}
	if len(s) > MaxName {
		return false
	}
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= ' ' || c >= 0x7f {
				return false
			}
		}
		return true
	}
	return swar.Run(s, printable) == len(s)
}

// opaqueID stands in for an id that fails ID: a digest of it, so that
// the records it joins (a call and its result, a lane and its launch)
// still meet, with none of its bytes kept.
func opaqueID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "id-" + hex.EncodeToString(sum[:8])
}

// clean reports whether every name of e passes Name. It runs over every
// event stored and built, so it reads the fields itself, without names'
// calls: nearly all of them are short printable ASCII.
func clean(e *Event) bool {
	if !okID(e.Agent) || !ok(e.Model) {
		return false
	}
	if s := e.Session; s != nil && !(okID(s.NativeID) && okID(s.ParentNativeID) && ok(s.AgentTool) && ok(s.Role) && ok(s.AgentVersion)) {
		return false
	}
	if l := e.LLM; l != nil && !(okID(l.MsgID) && ok(l.Side) && ok(l.Stop)) {
		return false
	}
	if c := e.Call; c != nil {
		if !(okID(c.ID) && okID(c.Continues) && ok(c.Tool) && ok(c.Kind) && ok(c.Cat) && ok(c.Verb) && ok(c.Server) &&
			ok(c.MCPTool) && ok(c.Skill) && ok(c.SubagentType) && ok(c.SubagentModel) && ok(c.Host) && ok(c.SkillWrite)) {
			return false
		}
		if v := c.VCS; v != nil && !(ok(v.Provider) && ok(v.Action) && ok(v.Repo)) {
			return false
		}
	}
	if x := e.Result; x != nil {
		if !(okID(x.CallID) && okID(x.Child) && ok(x.ErrClass)) {
			return false
		}
		if p := x.PR; p != nil && !(ok(p.Action) && ok(p.Provider) && ok(p.Repo)) {
			return false
		}
		if t := x.Ticket; t != nil && !(ok(t.Tracker) && ok(t.Action) && okID(t.ID)) {
			return false
		}
		if a := x.Artifact; a != nil && !ok(a.Version) {
			return false
		}
	}
	if r := e.Error; r != nil && !(ok(r.Source) && ok(r.Class) && ok(r.Hook) && ok(r.HookEvent) && okID(r.SrcUUID) && okID(r.RefCallID)) {
		return false
	}
	if p := e.Compact; p != nil && !ok(p.Trigger) {
		return false
	}
	if l := e.Lane; l != nil && !(ok(l.SubagentType) && okID(l.LaunchCallID)) {
		return false
	}
	if t := e.Total; t != nil {
		for i := range t.Models {
			if !ok(t.Models[i].Model) {
				return false
			}
		}
	}
	return true
}

// ok reports whether s is empty or passes Name. Most of the fields clean
// reads are empty: that test is inlined, the others read s (okText).
func ok(s string) bool { return s == "" || okText(s) }

// okText is ok at once for the rule case: printable ASCII without a
// space, read eight bytes at a time, the last eight bytes over the words
// before them (an id's tail is read as a word too).
func okText(s string) bool {
	if len(s) > MaxName {
		return false
	}
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= ' ' || c >= 0x7f {
				return Name(s) != ""
			}
		}
		return true
	}
	if swar.Run(s, printable) != len(s) {
		return Name(s) != ""
	}
	return true
}

// printable reports whether the eight bytes of w are all printable ASCII
// other than the space (0x21 to 0x7e).
func printable(w uint64) bool {
	// A byte below 0x21 (a space or a control), or from 0x7f up.
	return swar.Below(w, 0x21) == 0 && ((w+swar.Ones)|w)&swar.Highs == 0
}

// scrub clears the names of e that fail Name, in copies of the records
// that hold them.
func scrub(e *Event) {
	if e.Session != nil {
		s := *e.Session
		e.Session = &s
	}
	if e.LLM != nil {
		l := *e.LLM
		e.LLM = &l
	}
	if e.Call != nil {
		c := *e.Call
		if c.VCS != nil {
			v := *c.VCS
			c.VCS = &v
		}
		e.Call = &c
	}
	if e.Result != nil {
		x := *e.Result
		if x.PR != nil {
			p := *x.PR
			x.PR = &p
		}
		if x.Ticket != nil {
			t := *x.Ticket
			x.Ticket = &t
		}
		if x.Artifact != nil {
			a := *x.Artifact
			x.Artifact = &a
		}
		e.Result = &x
	}
	if e.Error != nil {
		r := *e.Error
		e.Error = &r
	}
	if e.Compact != nil {
		p := *e.Compact
		e.Compact = &p
	}
	if e.Lane != nil {
		l := *e.Lane
		e.Lane = &l
	}
	if e.Total != nil {
		t := *e.Total
		t.Models = append([]ModelTotal(nil), t.Models...)
		e.Total = &t
	}
	names(e, func(s *string, id bool) bool {
		switch {
		case *s == "" || !id && Name(*s) != "":
		case id:
			*s = ID(*s)
		default:
			*s = ""
		}
		return true
	})
}
