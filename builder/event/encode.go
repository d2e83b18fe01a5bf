package event

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/agentmap/agentmap/internal/swar"
)

// The state database keeps every committed batch of events as JSON, and
// encoding/json's reflection was a tenth of a catch-up's CPU. AppendJSON
// writes the same bytes by hand: the fields of each record in their order,
// omitempty where their tags say so, strings escaped as encoding/json
// escapes them (HTML characters, U+2028 and U+2029, invalid UTF-8). A
// field added to a record must be added here too: the tests fill every
// field of every record and compare with encoding/json, so a field
// forgotten fails them.

// AppendJSON appends evs as json.Marshal encodes them.
func AppendJSON(dst []byte, evs []Event) []byte {
	if evs == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range evs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEvent(dst, &evs[i])
	}
	return append(dst, ']')
}

func appendEvent(b []byte, v *Event) []byte {
	o := object{b: append(b, '{')}
	o.str(`"k":`, string(v.Kind), always)
	o.int(`"t":`, v.T, omitEmpty)
	o.str(`"a":`, v.Agent, omitEmpty)
	member(&o, `"s":`, v.Session, appendSession)
	member(&o, `"r":`, v.Repo, appendRepo)
	o.str(`"m":`, v.Model, omitEmpty)
	member(&o, `"u":`, v.User, appendUser)
	member(&o, `"l":`, v.LLM, appendLLM)
	member(&o, `"c":`, v.Call, appendCall)
	member(&o, `"x":`, v.Result, appendResult)
	member(&o, `"e":`, v.Error, appendError)
	member(&o, `"p":`, v.Compact, appendCompaction)
	member(&o, `"n":`, v.Lane, appendLane)
	member(&o, `"ct":`, v.Total, appendClientTotal)
	return append(o.b, '}')
}

func appendClientTotal(b []byte, v *ClientTotal) []byte {
	o := object{b: append(b, '{')}
	o.int(`"proc":`, v.Process, always)
	list(&o, `"models":`, v.Models, appendModelTotal, always)
	o.float(`"usd":`, v.CostUSD)
	return append(o.b, '}')
}

func appendModelTotal(b []byte, v *ModelTotal) []byte {
	o := object{b: append(b, '{')}
	o.str(`"m":`, v.Model, always)
	o.int(`"in":`, v.In, omitEmpty)
	o.int(`"cw":`, v.CW, omitEmpty)
	o.int(`"cw1h":`, v.CW1h, omitEmpty)
	o.int(`"cr":`, v.CR, omitEmpty)
	o.int(`"out":`, v.Out, omitEmpty)
	return append(o.b, '}')
}

func appendSession(b []byte, v *Session) []byte {
	o := object{b: append(b, '{')}
	o.str(`"id":`, v.NativeID, omitEmpty)
	o.str(`"tool":`, v.AgentTool, omitEmpty)
	o.str(`"role":`, v.Role, omitEmpty)
	o.str(`"parent":`, v.ParentNativeID, omitEmpty)
	o.str(`"ver":`, v.AgentVersion, omitEmpty)
	o.int(`"st":`, v.StartT, omitEmpty)
	o.int(`"et":`, v.EndT, omitEmpty)
	return append(o.b, '}')
}

func appendRepo(b []byte, v *Repo) []byte {
	o := object{b: append(b, '{')}
	o.str(`"key":`, v.Key, always)
	o.str(`"name":`, v.Name, always)
	o.str(`"remote":`, v.Remote, omitEmpty)
	return append(o.b, '}')
}

func appendUser(b []byte, v *User) []byte {
	o := object{b: append(b, '{')}
	o.int(`"chars":`, int64(v.Chars), always)
	o.int(`"images":`, int64(v.Images), omitEmpty)
	o.int(`"urls":`, int64(v.URLs), omitEmpty)
	return append(o.b, '}')
}

func appendLLM(b []byte, v *LLM) []byte {
	o := object{b: append(b, '{')}
	o.str(`"id":`, v.MsgID, omitEmpty)
	o.int(`"in":`, v.In, omitEmpty)
	o.int(`"cw":`, v.CW, omitEmpty)
	o.int(`"cr":`, v.CR, omitEmpty)
	o.int(`"out":`, v.Out, omitEmpty)
	o.int(`"cw1h":`, v.CW1h, omitEmpty)
	o.bool(`"fast":`, v.Fast)
	o.str(`"side":`, v.Side, omitEmpty)
	o.bool(`"relay":`, v.Relayed)
	o.int(`"lat":`, v.LatencyMs, omitEmpty)
	o.str(`"stop":`, v.Stop, omitEmpty)
	o.bool(`"think":`, v.Thinking)
	o.int(`"tools":`, int64(v.ToolCalls), omitEmpty)
	o.int(`"text":`, int64(v.TextChars), omitEmpty)
	return append(o.b, '}')
}

func appendTarget(b []byte, v *Target) []byte {
	o := object{b: append(b, '{')}
	o.str(`"repo":`, v.Repo, omitEmpty)
	o.str(`"path":`, v.Path, omitEmpty)
	o.str(`"label":`, v.Label, omitEmpty)
	o.str(`"touch":`, v.Touch, always)
	o.str(`"op":`, v.Op, omitEmpty)
	return append(o.b, '}')
}

func appendCall(b []byte, v *Call) []byte {
	o := object{b: append(b, '{')}
	o.str(`"id":`, v.ID, omitEmpty)
	o.str(`"tool":`, v.Tool, always)
	o.str(`"kind":`, v.Kind, always)
	o.str(`"cat":`, v.Cat, omitEmpty)
	o.str(`"verb":`, v.Verb, omitEmpty)
	list(&o, `"tg":`, v.Targets, appendTarget, omitEmpty)
	member(&o, `"vcs":`, v.VCS, appendVCS)
	o.str(`"srv":`, v.Server, omitEmpty)
	o.str(`"mtool":`, v.MCPTool, omitEmpty)
	o.str(`"skill":`, v.Skill, omitEmpty)
	o.str(`"satype":`, v.SubagentType, omitEmpty)
	o.str(`"samodel":`, v.SubagentModel, omitEmpty)
	o.str(`"host":`, v.Host, omitEmpty)
	o.str(`"skw":`, v.SkillWrite, omitEmpty)
	o.bool(`"awu":`, v.AwaitsUser)
	o.str(`"cont":`, v.Continues, omitEmpty)
	return append(o.b, '}')
}

func appendVCS(b []byte, v *VCS) []byte {
	o := object{b: append(b, '{')}
	o.str(`"provider":`, v.Provider, always)
	o.str(`"action":`, v.Action, always)
	o.str(`"repo":`, v.Repo, omitEmpty)
	o.int(`"number":`, int64(v.Number), omitEmpty)
	return append(o.b, '}')
}

func appendResult(b []byte, v *Result) []byte {
	o := object{b: append(b, '{')}
	o.str(`"id":`, v.CallID, always)
	o.bool(`"err":`, v.Err)
	o.str(`"class":`, v.ErrClass, omitEmpty)
	if v.ExitCode != nil {
		o.int(`"exit":`, int64(*v.ExitCode), always)
	}
	o.int(`"out":`, v.OutBytes, omitEmpty)
	o.int(`"dur":`, v.DurMs, omitEmpty)
	o.str(`"child":`, v.Child, omitEmpty)
	list(&o, `"tg":`, v.Targets, appendTarget, omitEmpty)
	member(&o, `"pr":`, v.PR, appendPR)
	member(&o, `"commit":`, v.Commit, appendCommit)
	member(&o, `"ticket":`, v.Ticket, appendTicket)
	member(&o, `"art":`, v.Artifact, appendArtifact)
	return append(o.b, '}')
}

func appendPR(b []byte, v *PR) []byte {
	o := object{b: append(b, '{')}
	o.str(`"action":`, v.Action, always)
	o.str(`"provider":`, v.Provider, always)
	o.str(`"repo":`, v.Repo, always)
	o.int(`"number":`, int64(v.Number), always)
	o.str(`"url":`, v.URL, omitEmpty)
	return append(o.b, '}')
}

func appendCommit(b []byte, v *Commit) []byte {
	o := object{b: append(b, '{')}
	o.str(`"repo":`, v.Repo, omitEmpty)
	o.str(`"of":`, v.Of, omitEmpty)
	o.str(`"sha":`, v.SHA, always)
	o.int(`"files":`, int64(v.Files), omitEmpty)
	o.int(`"ins":`, int64(v.Ins), omitEmpty)
	o.int(`"del":`, int64(v.Del), omitEmpty)
	return append(o.b, '}')
}

func appendTicket(b []byte, v *Ticket) []byte {
	o := object{b: append(b, '{')}
	o.str(`"tracker":`, v.Tracker, always)
	o.str(`"action":`, v.Action, always)
	o.str(`"id":`, v.ID, always)
	return append(o.b, '}')
}

func appendArtifact(b []byte, v *Artifact) []byte {
	o := object{b: append(b, '{')}
	o.str(`"url":`, v.URL, always)
	o.str(`"version":`, v.Version, omitEmpty)
	return append(o.b, '}')
}

func appendError(b []byte, v *Error) []byte {
	o := object{b: append(b, '{')}
	o.str(`"src":`, v.Source, always)
	o.str(`"class":`, v.Class, always)
	o.str(`"hook":`, v.Hook, omitEmpty)
	o.str(`"hookEvent":`, v.HookEvent, omitEmpty)
	o.str(`"uuid":`, v.SrcUUID, omitEmpty)
	o.str(`"ref":`, v.RefCallID, omitEmpty)
	o.int(`"retry":`, int64(v.Retry), omitEmpty)
	return append(o.b, '}')
}

func appendCompaction(b []byte, v *Compaction) []byte {
	o := object{b: append(b, '{')}
	o.str(`"trigger":`, v.Trigger, omitEmpty)
	o.int(`"pre":`, v.PreTokens, omitEmpty)
	o.int(`"post":`, v.PostTokens, omitEmpty)
	o.int(`"ms":`, v.Ms, omitEmpty)
	return append(o.b, '}')
}

func appendLane(b []byte, v *Lane) []byte {
	o := object{b: append(b, '{')}
	o.str(`"type":`, v.SubagentType, omitEmpty)
	o.str(`"launch":`, v.LaunchCallID, omitEmpty)
	o.bool(`"launched":`, v.Launched)
	o.int(`"logst":`, v.LogStartMs, omitEmpty)
	return append(o.b, '}')
}

// object appends the members of one JSON object.
type object struct {
	b []byte
	n int
}

// key writes a member's key, given as it is written (`"k":`): one append
// rather than three, for the dozen members of every event.
func (o *object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, k...)
}

// omitEmpty and always are a member's omitempty.
const (
	omitEmpty = true
	always    = false
)

func (o *object) str(k, v string, omit bool) {
	if v != "" || !omit {
		o.key(k)
		o.b = appendString(o.b, v)
	}
}

func (o *object) int(k string, v int64, omit bool) {
	if v != 0 || !omit {
		o.key(k)
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

// bool and float are always omitempty in the records.
func (o *object) bool(k string, v bool) {
	if v {
		o.key(k)
		o.b = append(o.b, "true"...)
	}
}

func (o *object) float(k string, v float64) {
	if v != 0 {
		o.key(k)
		o.b = appendFloat(o.b, v)
	}
}

// member writes a record a pointer holds; nil is left out (omitempty).
func member[T any](o *object, k string, v *T, write func([]byte, *T) []byte) {
	if v != nil {
		o.key(k)
		o.b = write(o.b, v)
	}
}

// list writes a slice of records: nil is null, unless omitted with an
// empty one.
func list[T any](o *object, k string, v []T, write func([]byte, *T) []byte, omit bool) {
	switch {
	case len(v) == 0 && omit:
		return
	case v == nil:
		o.key(k)
		o.b = append(o.b, "null"...)
		return
	}
	o.key(k)
	o.b = append(o.b, '[')
	for i := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = write(o.b, &v[i])
	}
	o.b = append(o.b, ']')
}

// appendFloat is encoding/json's float64 encoding (ES6 number form).
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...) // encoding/json refuses these; never produced
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString is encoding/json's string encoding, HTML escaping on.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := plainRun(s); i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainRun returns the length of a prefix of s that appendString copies as
// it is, eight bytes at a time (swar.Run).
func plainRun(s string) int { return swar.Run(s, plainWord) }

// plainWord reports whether appendString copies each of the eight bytes
// of w as it is.
func plainWord(w uint64) bool {
	const ones = swar.Ones
	// '<' and '>' differ in bit 1 only, '"' and '&' in bit 2: one test
	// for each pair.
	return swar.Below(w, 0x20)|w&swar.Highs|swar.Zero(w^'\\'*ones)|
		swar.Zero((w|0x02*ones)^'>'*ones)|swar.Zero((w|0x04*ones)^'&'*ones) == 0
}
