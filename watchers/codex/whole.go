package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// ParseWhole parses the oldest rollout form, one JSON document
// {"session":{timestamp, id, instructions}, "items":[…]}, which is not
// line-based. The document is streamed: the decoder walks its tokens and
// decodes one item at a time, so memory is bounded by the largest item,
// never by the file. Items have no times of their own; they take the
// session's timestamp.
func ParseWhole(r io.Reader) ([]event.Event, watchers.Source, error) {
	src := watchers.Source{Agent: Agent}
	p := NewParser(src)
	p.st.Form = "legacy"
	dec := json.NewDecoder(r)
	fail := func(what string, err error) ([]event.Event, watchers.Source, error) {
		return p.out, p.wholeSource(), fmt.Errorf("codex: single-JSON rollout: %s%s", what, wholeOffset(dec, err))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail("not a JSON object", err)
	}
	sessionLate := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("invalid JSON", err)
		}
		key, _ := tok.(string)
		switch key {
		case "session":
			var s item
			if err := dec.Decode(&s); err != nil && !isTypeError(err) {
				return fail("invalid session", err)
			}
			sessionLate = len(p.out) > 0
			p.legacyHeader(&s)
		case "items":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return fail("items is not an array", err)
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fail("invalid item", err)
				}
				p.st.N++
				p.wholeItem(raw)
			}
			if _, err := dec.Token(); err != nil {
				return fail("invalid items", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail("invalid JSON", err)
			}
		}
	}
	if sessionLate {
		p.out = sessionFirst(p.out, p.st.T)
	}
	out := p.out
	p.out = nil
	src = p.wholeSource()
	if src.Session == "" {
		return out, src, ErrNoSession
	}
	return out, src, nil
}

func (p *Parser) wholeSource() watchers.Source {
	return watchers.Source{Agent: Agent, Session: p.st.ID}
}

// sessionFirst moves the session facts ahead of items that came before the
// session object, which also gives those items the session's time.
func sessionFirst(evs []event.Event, t int64) []event.Event {
	var sess *event.Event
	rest := evs[:0:0]
	for i := range evs {
		ev := evs[i]
		if ev.Kind == event.KindSession {
			if ev.Session.NativeID != "" {
				sess = &ev
			}
			continue
		}
		if ev.T == 0 {
			ev.T = t
		}
		rest = append(rest, ev)
	}
	if sess == nil {
		return evs
	}
	sess.T = t
	return append([]event.Event{*sess}, rest...)
}

func wholeOffset(dec *json.Decoder, err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return " (truncated)"
	}
	return fmt.Sprintf(" at byte %d", dec.InputOffset())
}
