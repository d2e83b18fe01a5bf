package event

import (
	"bytes"

	"github.com/agentmap/agentmap/internal/jsondec"
)

// Reading a session's events back from the state database (every flush of
// a session that `run` follows, and a catch-up's maps of sessions met
// before) decoded them with encoding/json, whose reflection was a tenth
// of a catch-up's CPU. DecodeJSON reads AppendJSON's output by hand: the
// compact JSON encoding/json writes, members in any order, each at most
// once, named exactly, with the values their fields' types take. Anything
// else (white space, a name differing in case, an unknown or repeated
// member, a null in a field that is neither a pointer nor a slice, a
// number out of range, a string with invalid UTF-8 or a lone surrogate) is
// refused, and the
// caller falls back to encoding/json, which then decides; so whatever
// DecodeJSON accepts, it decodes as encoding/json does. The tests hold it
// to encoding/json on every event of the corpus, on records with every
// field filled, and under a fuzz target.

// DecodeJSON decodes a batch written by AppendJSON (or json.Marshal), or
// reports false where encoding/json must decide.
func DecodeJSON(data []byte) ([]Event, bool) {
	d := jsondec.New(data)
	if d.Literal("null") {
		return nil, d.Done()
	}
	if !d.Byte('[') {
		return nil, false
	}
	// Each record AppendJSON writes starts with its kind: their count
	// sizes the slice, which would otherwise be copied as it grows.
	evs := make([]Event, 0, bytes.Count(data, []byte(`{"k":`)))
	if d.Byte(']') {
		return evs, d.Done()
	}
	for {
		evs = append(evs, Event{})
		if !jsondec.Object(&d, &evs[len(evs)-1], memberEvent) {
			return nil, false
		}
		if d.Byte(']') {
			return evs, d.Done()
		}
		if !d.Byte(',') {
			return nil, false
		}
	}
}

// The records' members, as AppendJSON writes them; a member's number is
// its place in the record.

func memberEvent(d *jsondec.Decoder, v *Event, k []byte) int {
	switch string(k) {
	case "k":
		var s string
		ok := d.Str(&s)
		v.Kind = Kind(s)
		return jsondec.Field(0, ok)
	case "t":
		return jsondec.Field(1, d.Int64(&v.T))
	case "a":
		return jsondec.Field(2, d.Str(&v.Agent))
	case "s":
		return jsondec.Field(3, jsondec.Record(d, &v.Session, memberSession))
	case "r":
		return jsondec.Field(4, jsondec.Record(d, &v.Repo, memberRepo))
	case "m":
		return jsondec.Field(5, d.Str(&v.Model))
	case "u":
		return jsondec.Field(6, jsondec.Record(d, &v.User, memberUser))
	case "l":
		return jsondec.Field(7, jsondec.Record(d, &v.LLM, memberLLM))
	case "c":
		return jsondec.Field(8, jsondec.Record(d, &v.Call, memberCall))
	case "x":
		return jsondec.Field(9, jsondec.Record(d, &v.Result, memberResult))
	case "e":
		return jsondec.Field(10, jsondec.Record(d, &v.Error, memberError))
	case "p":
		return jsondec.Field(11, jsondec.Record(d, &v.Compact, memberCompaction))
	case "n":
		return jsondec.Field(12, jsondec.Record(d, &v.Lane, memberLane))
	case "ct":
		return jsondec.Field(13, jsondec.Record(d, &v.Total, memberClientTotal))
	}
	return -1
}

func memberClientTotal(d *jsondec.Decoder, v *ClientTotal, k []byte) int {
	switch string(k) {
	case "proc":
		return jsondec.Field(0, d.Int64(&v.Process))
	case "models":
		return jsondec.Field(1, jsondec.Records(d, &v.Models, memberModelTotal))
	case "usd":
		return jsondec.Field(2, d.Float(&v.CostUSD))
	}
	return -1
}

func memberModelTotal(d *jsondec.Decoder, v *ModelTotal, k []byte) int {
	switch string(k) {
	case "m":
		return jsondec.Field(0, d.Str(&v.Model))
	case "in":
		return jsondec.Field(1, d.Int64(&v.In))
	case "cw":
		return jsondec.Field(2, d.Int64(&v.CW))
	case "cw1h":
		return jsondec.Field(3, d.Int64(&v.CW1h))
	case "cr":
		return jsondec.Field(4, d.Int64(&v.CR))
	case "out":
		return jsondec.Field(5, d.Int64(&v.Out))
	}
	return -1
}

func memberSession(d *jsondec.Decoder, v *Session, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, d.Str(&v.NativeID))
	case "tool":
		return jsondec.Field(1, d.Str(&v.AgentTool))
	case "role":
		return jsondec.Field(2, d.Str(&v.Role))
	case "parent":
		return jsondec.Field(3, d.Str(&v.ParentNativeID))
	case "ver":
		return jsondec.Field(4, d.Str(&v.AgentVersion))
	case "st":
		return jsondec.Field(5, d.Int64(&v.StartT))
	case "et":
		return jsondec.Field(6, d.Int64(&v.EndT))
	}
	return -1
}

func memberRepo(d *jsondec.Decoder, v *Repo, k []byte) int {
	switch string(k) {
	case "key":
		return jsondec.Field(0, d.Str(&v.Key))
	case "name":
		return jsondec.Field(1, d.Str(&v.Name))
	case "remote":
		return jsondec.Field(2, d.Str(&v.Remote))
	}
	return -1
}

func memberUser(d *jsondec.Decoder, v *User, k []byte) int {
	switch string(k) {
	case "chars":
		return jsondec.Field(0, d.Int(&v.Chars))
	case "images":
		return jsondec.Field(1, d.Int(&v.Images))
	case "urls":
		return jsondec.Field(2, d.Int(&v.URLs))
	}
	return -1
}

func memberLLM(d *jsondec.Decoder, v *LLM, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, d.Str(&v.MsgID))
	case "in":
		return jsondec.Field(1, d.Int64(&v.In))
	case "cw":
		return jsondec.Field(2, d.Int64(&v.CW))
	case "cr":
		return jsondec.Field(3, d.Int64(&v.CR))
	case "out":
		return jsondec.Field(4, d.Int64(&v.Out))
	case "cw1h":
		return jsondec.Field(5, d.Int64(&v.CW1h))
	case "fast":
		return jsondec.Field(6, d.Bool(&v.Fast))
	case "side":
		return jsondec.Field(7, d.Str(&v.Side))
	case "lat":
		return jsondec.Field(8, d.Int64(&v.LatencyMs))
	case "stop":
		return jsondec.Field(9, d.Str(&v.Stop))
	case "think":
		return jsondec.Field(10, d.Bool(&v.Thinking))
	case "tools":
		return jsondec.Field(11, d.Int(&v.ToolCalls))
	case "text":
		return jsondec.Field(12, d.Int(&v.TextChars))
	case "relay":
		return jsondec.Field(13, d.Bool(&v.Relayed))
	}
	return -1
}

func memberTarget(d *jsondec.Decoder, v *Target, k []byte) int {
	switch string(k) {
	case "repo":
		return jsondec.Field(0, d.Str(&v.Repo))
	case "path":
		return jsondec.Field(1, d.Str(&v.Path))
	case "label":
		return jsondec.Field(2, d.Str(&v.Label))
	case "touch":
		return jsondec.Field(3, d.Str(&v.Touch))
	case "op":
		return jsondec.Field(4, d.Str(&v.Op))
	}
	return -1
}

func memberCall(d *jsondec.Decoder, v *Call, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, d.Str(&v.ID))
	case "tool":
		return jsondec.Field(1, d.Str(&v.Tool))
	case "kind":
		return jsondec.Field(2, d.Str(&v.Kind))
	case "cat":
		return jsondec.Field(3, d.Str(&v.Cat))
	case "verb":
		return jsondec.Field(4, d.Str(&v.Verb))
	case "tg":
		return jsondec.Field(5, jsondec.Records(d, &v.Targets, memberTarget))
	case "vcs":
		return jsondec.Field(6, jsondec.Record(d, &v.VCS, memberVCS))
	case "srv":
		return jsondec.Field(7, d.Str(&v.Server))
	case "mtool":
		return jsondec.Field(8, d.Str(&v.MCPTool))
	case "skill":
		return jsondec.Field(9, d.Str(&v.Skill))
	case "satype":
		return jsondec.Field(10, d.Str(&v.SubagentType))
	case "samodel":
		return jsondec.Field(11, d.Str(&v.SubagentModel))
	case "host":
		return jsondec.Field(12, d.Str(&v.Host))
	case "skw":
		return jsondec.Field(13, d.Str(&v.SkillWrite))
	case "awu":
		return jsondec.Field(14, d.Bool(&v.AwaitsUser))
	case "cont":
		return jsondec.Field(15, d.Str(&v.Continues))
	}
	return -1
}

func memberVCS(d *jsondec.Decoder, v *VCS, k []byte) int {
	switch string(k) {
	case "provider":
		return jsondec.Field(0, d.Str(&v.Provider))
	case "action":
		return jsondec.Field(1, d.Str(&v.Action))
	case "repo":
		return jsondec.Field(2, d.Str(&v.Repo))
	case "number":
		return jsondec.Field(3, d.Int(&v.Number))
	}
	return -1
}

func memberResult(d *jsondec.Decoder, v *Result, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, d.Str(&v.CallID))
	case "err":
		return jsondec.Field(1, d.Bool(&v.Err))
	case "class":
		return jsondec.Field(2, d.Str(&v.ErrClass))
	case "exit":
		if d.Literal("null") {
			v.ExitCode = nil
			return 3
		}
		v.ExitCode = new(int)
		return jsondec.Field(3, d.Int(v.ExitCode))
	case "out":
		return jsondec.Field(4, d.Int64(&v.OutBytes))
	case "dur":
		return jsondec.Field(5, d.Int64(&v.DurMs))
	case "child":
		return jsondec.Field(6, d.Str(&v.Child))
	case "tg":
		return jsondec.Field(7, jsondec.Records(d, &v.Targets, memberTarget))
	case "pr":
		return jsondec.Field(8, jsondec.Record(d, &v.PR, memberPR))
	case "commit":
		return jsondec.Field(9, jsondec.Record(d, &v.Commit, memberCommit))
	case "ticket":
		return jsondec.Field(10, jsondec.Record(d, &v.Ticket, memberTicket))
	case "art":
		return jsondec.Field(11, jsondec.Record(d, &v.Artifact, memberArtifact))
	}
	return -1
}

func memberPR(d *jsondec.Decoder, v *PR, k []byte) int {
	switch string(k) {
	case "action":
		return jsondec.Field(0, d.Str(&v.Action))
	case "provider":
		return jsondec.Field(1, d.Str(&v.Provider))
	case "repo":
		return jsondec.Field(2, d.Str(&v.Repo))
	case "number":
		return jsondec.Field(3, d.Int(&v.Number))
	case "url":
		return jsondec.Field(4, d.Str(&v.URL))
	}
	return -1
}

func memberCommit(d *jsondec.Decoder, v *Commit, k []byte) int {
	switch string(k) {
	case "repo":
		return jsondec.Field(0, d.Str(&v.Repo))
	case "of":
		return jsondec.Field(1, d.Str(&v.Of))
	case "sha":
		return jsondec.Field(2, d.Str(&v.SHA))
	case "files":
		return jsondec.Field(3, d.Int(&v.Files))
	case "ins":
		return jsondec.Field(4, d.Int(&v.Ins))
	case "del":
		return jsondec.Field(5, d.Int(&v.Del))
	}
	return -1
}

func memberTicket(d *jsondec.Decoder, v *Ticket, k []byte) int {
	switch string(k) {
	case "tracker":
		return jsondec.Field(0, d.Str(&v.Tracker))
	case "action":
		return jsondec.Field(1, d.Str(&v.Action))
	case "id":
		return jsondec.Field(2, d.Str(&v.ID))
	}
	return -1
}

func memberArtifact(d *jsondec.Decoder, v *Artifact, k []byte) int {
	switch string(k) {
	case "url":
		return jsondec.Field(0, d.Str(&v.URL))
	case "version":
		return jsondec.Field(1, d.Str(&v.Version))
	}
	return -1
}

func memberError(d *jsondec.Decoder, v *Error, k []byte) int {
	switch string(k) {
	case "src":
		return jsondec.Field(0, d.Str(&v.Source))
	case "class":
		return jsondec.Field(1, d.Str(&v.Class))
	case "hook":
		return jsondec.Field(2, d.Str(&v.Hook))
	case "hookEvent":
		return jsondec.Field(3, d.Str(&v.HookEvent))
	case "uuid":
		return jsondec.Field(4, d.Str(&v.SrcUUID))
	case "ref":
		return jsondec.Field(5, d.Str(&v.RefCallID))
	case "retry":
		return jsondec.Field(6, d.Int(&v.Retry))
	}
	return -1
}

func memberCompaction(d *jsondec.Decoder, v *Compaction, k []byte) int {
	switch string(k) {
	case "trigger":
		return jsondec.Field(0, d.Str(&v.Trigger))
	case "pre":
		return jsondec.Field(1, d.Int64(&v.PreTokens))
	case "post":
		return jsondec.Field(2, d.Int64(&v.PostTokens))
	case "ms":
		return jsondec.Field(3, d.Int64(&v.Ms))
	}
	return -1
}

func memberLane(d *jsondec.Decoder, v *Lane, k []byte) int {
	switch string(k) {
	case "type":
		return jsondec.Field(0, d.Str(&v.SubagentType))
	case "launch":
		return jsondec.Field(1, d.Str(&v.LaunchCallID))
	case "launched":
		return jsondec.Field(2, d.Bool(&v.Launched))
	case "logst":
		return jsondec.Field(3, d.Int64(&v.LogStartMs))
	}
	return -1
}
