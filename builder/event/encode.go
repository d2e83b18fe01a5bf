package event

import (
	"math"
	"strconv"
	"unicode/utf8"
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
	o.str("k", string(v.Kind))
	if v.T != 0 {
		o.int("t", v.T)
	}
	if v.Agent != "" {
		o.str("a", v.Agent)
	}
	if v.Session != nil {
		o.key("s")
		o.b = appendSession(o.b, v.Session)
	}
	if v.Repo != nil {
		o.key("r")
		o.b = appendRepo(o.b, v.Repo)
	}
	if v.Model != "" {
		o.str("m", v.Model)
	}
	if v.User != nil {
		o.key("u")
		o.b = appendUser(o.b, v.User)
	}
	if v.LLM != nil {
		o.key("l")
		o.b = appendLLM(o.b, v.LLM)
	}
	if v.Call != nil {
		o.key("c")
		o.b = appendCall(o.b, v.Call)
	}
	if v.Result != nil {
		o.key("x")
		o.b = appendResult(o.b, v.Result)
	}
	if v.Error != nil {
		o.key("e")
		o.b = appendError(o.b, v.Error)
	}
	if v.Compact != nil {
		o.key("p")
		o.b = appendCompaction(o.b, v.Compact)
	}
	if v.Lane != nil {
		o.key("n")
		o.b = appendLane(o.b, v.Lane)
	}
	if v.Total != nil {
		o.key("ct")
		o.b = appendClientTotal(o.b, v.Total)
	}
	return append(o.b, '}')
}

func appendClientTotal(b []byte, v *ClientTotal) []byte {
	o := object{b: append(b, '{')}
	o.int("proc", v.Process)
	if v.Models == nil {
		o.key("models")
		o.b = append(o.b, "null"...)
	} else {
		o.key("models")
		o.b = append(o.b, '[')
		for i := range v.Models {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendModelTotal(o.b, &v.Models[i])
		}
		o.b = append(o.b, ']')
	}
	if v.CostUSD != 0 {
		o.key("usd")
		o.b = appendFloat(o.b, v.CostUSD)
	}
	return append(o.b, '}')
}

func appendModelTotal(b []byte, v *ModelTotal) []byte {
	o := object{b: append(b, '{')}
	o.str("m", v.Model)
	if v.In != 0 {
		o.int("in", v.In)
	}
	if v.CW != 0 {
		o.int("cw", v.CW)
	}
	if v.CW1h != 0 {
		o.int("cw1h", v.CW1h)
	}
	if v.CR != 0 {
		o.int("cr", v.CR)
	}
	if v.Out != 0 {
		o.int("out", v.Out)
	}
	return append(o.b, '}')
}

func appendSession(b []byte, v *Session) []byte {
	o := object{b: append(b, '{')}
	if v.NativeID != "" {
		o.str("id", v.NativeID)
	}
	if v.AgentTool != "" {
		o.str("tool", v.AgentTool)
	}
	if v.Role != "" {
		o.str("role", v.Role)
	}
	if v.ParentNativeID != "" {
		o.str("parent", v.ParentNativeID)
	}
	if v.AgentVersion != "" {
		o.str("ver", v.AgentVersion)
	}
	if v.StartT != 0 {
		o.int("st", v.StartT)
	}
	if v.EndT != 0 {
		o.int("et", v.EndT)
	}
	return append(o.b, '}')
}

func appendRepo(b []byte, v *Repo) []byte {
	o := object{b: append(b, '{')}
	o.str("key", v.Key)
	o.str("name", v.Name)
	if v.Remote != "" {
		o.str("remote", v.Remote)
	}
	return append(o.b, '}')
}

func appendUser(b []byte, v *User) []byte {
	o := object{b: append(b, '{')}
	o.int("chars", int64(v.Chars))
	if v.Images != 0 {
		o.int("images", int64(v.Images))
	}
	if v.URLs != 0 {
		o.int("urls", int64(v.URLs))
	}
	return append(o.b, '}')
}

func appendLLM(b []byte, v *LLM) []byte {
	o := object{b: append(b, '{')}
	if v.MsgID != "" {
		o.str("id", v.MsgID)
	}
	if v.In != 0 {
		o.int("in", v.In)
	}
	if v.CW != 0 {
		o.int("cw", v.CW)
	}
	if v.CR != 0 {
		o.int("cr", v.CR)
	}
	if v.Out != 0 {
		o.int("out", v.Out)
	}
	if v.CW1h != 0 {
		o.int("cw1h", v.CW1h)
	}
	if v.Fast {
		o.key("fast")
		o.b = append(o.b, "true"...)
	}
	if v.Side != "" {
		o.str("side", v.Side)
	}
	if v.LatencyMs != 0 {
		o.int("lat", v.LatencyMs)
	}
	if v.Stop != "" {
		o.str("stop", v.Stop)
	}
	if v.Thinking {
		o.key("think")
		o.b = append(o.b, "true"...)
	}
	if v.ToolCalls != 0 {
		o.int("tools", int64(v.ToolCalls))
	}
	if v.TextChars != 0 {
		o.int("text", int64(v.TextChars))
	}
	return append(o.b, '}')
}

func appendTarget(b []byte, v *Target) []byte {
	o := object{b: append(b, '{')}
	if v.Repo != "" {
		o.str("repo", v.Repo)
	}
	if v.Path != "" {
		o.str("path", v.Path)
	}
	if v.Label != "" {
		o.str("label", v.Label)
	}
	o.str("touch", v.Touch)
	if v.Op != "" {
		o.str("op", v.Op)
	}
	return append(o.b, '}')
}

func appendCall(b []byte, v *Call) []byte {
	o := object{b: append(b, '{')}
	if v.ID != "" {
		o.str("id", v.ID)
	}
	o.str("tool", v.Tool)
	o.str("kind", v.Kind)
	if v.Cat != "" {
		o.str("cat", v.Cat)
	}
	if v.Verb != "" {
		o.str("verb", v.Verb)
	}
	if len(v.Targets) > 0 {
		o.key("tg")
		o.b = append(o.b, '[')
		for i := range v.Targets {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendTarget(o.b, &v.Targets[i])
		}
		o.b = append(o.b, ']')
	}
	if v.VCS != nil {
		o.key("vcs")
		o.b = appendVCS(o.b, v.VCS)
	}
	if v.Server != "" {
		o.str("srv", v.Server)
	}
	if v.MCPTool != "" {
		o.str("mtool", v.MCPTool)
	}
	if v.Skill != "" {
		o.str("skill", v.Skill)
	}
	if v.SubagentType != "" {
		o.str("satype", v.SubagentType)
	}
	if v.SubagentModel != "" {
		o.str("samodel", v.SubagentModel)
	}
	if v.Host != "" {
		o.str("host", v.Host)
	}
	if v.SkillWrite != "" {
		o.str("skw", v.SkillWrite)
	}
	if v.AwaitsUser {
		o.key("awu")
		o.b = append(o.b, "true"...)
	}
	if v.Continues != "" {
		o.str("cont", v.Continues)
	}
	return append(o.b, '}')
}

func appendVCS(b []byte, v *VCS) []byte {
	o := object{b: append(b, '{')}
	o.str("provider", v.Provider)
	o.str("action", v.Action)
	if v.Repo != "" {
		o.str("repo", v.Repo)
	}
	if v.Number != 0 {
		o.int("number", int64(v.Number))
	}
	return append(o.b, '}')
}

func appendResult(b []byte, v *Result) []byte {
	o := object{b: append(b, '{')}
	o.str("id", v.CallID)
	if v.Err {
		o.key("err")
		o.b = append(o.b, "true"...)
	}
	if v.ErrClass != "" {
		o.str("class", v.ErrClass)
	}
	if v.ExitCode != nil {
		o.int("exit", int64(*v.ExitCode))
	}
	if v.OutBytes != 0 {
		o.int("out", v.OutBytes)
	}
	if v.DurMs != 0 {
		o.int("dur", v.DurMs)
	}
	if v.Child != "" {
		o.str("child", v.Child)
	}
	if len(v.Targets) > 0 {
		o.key("tg")
		o.b = append(o.b, '[')
		for i := range v.Targets {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendTarget(o.b, &v.Targets[i])
		}
		o.b = append(o.b, ']')
	}
	if v.PR != nil {
		o.key("pr")
		o.b = appendPR(o.b, v.PR)
	}
	if v.Commit != nil {
		o.key("commit")
		o.b = appendCommit(o.b, v.Commit)
	}
	if v.Ticket != nil {
		o.key("ticket")
		o.b = appendTicket(o.b, v.Ticket)
	}
	if v.Artifact != nil {
		o.key("art")
		o.b = appendArtifact(o.b, v.Artifact)
	}
	return append(o.b, '}')
}

func appendPR(b []byte, v *PR) []byte {
	o := object{b: append(b, '{')}
	o.str("action", v.Action)
	o.str("provider", v.Provider)
	o.str("repo", v.Repo)
	o.int("number", int64(v.Number))
	if v.URL != "" {
		o.str("url", v.URL)
	}
	return append(o.b, '}')
}

func appendCommit(b []byte, v *Commit) []byte {
	o := object{b: append(b, '{')}
	if v.Repo != "" {
		o.str("repo", v.Repo)
	}
	if v.Of != "" {
		o.str("of", v.Of)
	}
	o.str("sha", v.SHA)
	if v.Files != 0 {
		o.int("files", int64(v.Files))
	}
	if v.Ins != 0 {
		o.int("ins", int64(v.Ins))
	}
	if v.Del != 0 {
		o.int("del", int64(v.Del))
	}
	return append(o.b, '}')
}

func appendTicket(b []byte, v *Ticket) []byte {
	o := object{b: append(b, '{')}
	o.str("tracker", v.Tracker)
	o.str("action", v.Action)
	o.str("id", v.ID)
	return append(o.b, '}')
}

func appendArtifact(b []byte, v *Artifact) []byte {
	o := object{b: append(b, '{')}
	o.str("url", v.URL)
	if v.Version != "" {
		o.str("version", v.Version)
	}
	return append(o.b, '}')
}

func appendError(b []byte, v *Error) []byte {
	o := object{b: append(b, '{')}
	o.str("src", v.Source)
	o.str("class", v.Class)
	if v.Hook != "" {
		o.str("hook", v.Hook)
	}
	if v.HookEvent != "" {
		o.str("hookEvent", v.HookEvent)
	}
	if v.SrcUUID != "" {
		o.str("uuid", v.SrcUUID)
	}
	if v.RefCallID != "" {
		o.str("ref", v.RefCallID)
	}
	if v.Retry != 0 {
		o.int("retry", int64(v.Retry))
	}
	return append(o.b, '}')
}

func appendCompaction(b []byte, v *Compaction) []byte {
	o := object{b: append(b, '{')}
	if v.Trigger != "" {
		o.str("trigger", v.Trigger)
	}
	if v.PreTokens != 0 {
		o.int("pre", v.PreTokens)
	}
	if v.PostTokens != 0 {
		o.int("post", v.PostTokens)
	}
	if v.Ms != 0 {
		o.int("ms", v.Ms)
	}
	return append(o.b, '}')
}

func appendLane(b []byte, v *Lane) []byte {
	o := object{b: append(b, '{')}
	if v.SubagentType != "" {
		o.str("type", v.SubagentType)
	}
	if v.LaunchCallID != "" {
		o.str("launch", v.LaunchCallID)
	}
	if v.Launched {
		o.key("launched")
		o.b = append(o.b, "true"...)
	}
	if v.LogStartMs != 0 {
		o.int("logst", v.LogStartMs)
	}
	return append(o.b, '}')
}

// object appends the members of one JSON object.
type object struct {
	b []byte
	n int
}

func (o *object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *object) str(k, v string) {
	o.key(k)
	o.b = appendString(o.b, v)
}

func (o *object) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
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
	for i := 0; i < len(s); {
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
