package mapfile

import (
	"bytes"
	"reflect"
	"strings"

	"github.com/agentmap/agentmap/builder"

	"github.com/agentmap/agentmap/internal/jsondec"
)

// DecodeJSON decodes the JSON of a map into a Map, or reports false where
// encoding/json must decide. Readers of a whole store (usage, report)
// decode every map, and encoding/json's reflection and scanner were most
// of their time: this reads the compact JSON a map is written in member
// by member (internal/jsondec), stepping over the members the Map does not
// keep (validated, as encoding/json steps over them), and refuses anything
// it does not mirror exactly (white space, a name matched only up to case,
// a member the Map keeps given twice, a value its field's type does not
// take, a null element),
// for the caller to hand the map to encoding/json, which then reads it or
// reports the error. So whatever it accepts, it decodes as json.Unmarshal
// does; the tests hold it to json.Unmarshal over the corpus's maps, every
// field filled, and fuzzing.
func DecodeJSON(data []byte) (*Map, bool) {
	d := jsondec.New(data)
	m := new(Map)
	// A map's events are most of it, up to thousands of records of half a
	// KB each: the slice is made for them at once. Each has a "seq"
	// member, as have the PRs, and nothing else does; the estimate is
	// bounded by what a map holds, so that text made of "seq" alone
	// cannot ask for gigabytes.
	events := min(bytes.Count(data, []byte(`"seq":`)), maxEventsHint, len(data)/64)
	member := func(d *jsondec.Decoder, v *Map, k []byte) int {
		if string(k) == "events" {
			return jsondec.Field(eventsMember, jsondec.RecordsOfCap(d, &v.Events, memberEvent, namesEvent, events))
		}
		return memberMap(d, v, k)
	}
	if !jsondec.ObjectOf(&d, m, member, namesMap) || !d.Done() {
		return nil, false
	}
	return m, true
}

// eventsMember is the number memberMap gives the events.
const eventsMember = 9

// maxEventsHint bounds the events a slice is first made for: what a map
// keeps unless the config raises its event cap.
const maxEventsHint = builder.DefaultEventCap

// The member names encoding/json matches in each record, for ObjectOf's
// check of the names it steps over.
var (
	namesMap     = memberNames[Map]()
	namesSession = memberNames[Session]()
	namesTotals  = memberNames[Totals]()
	namesRepo    = memberNames[Repo]()
	namesFile    = memberNames[File]()
	namesAgent   = memberNames[Agent]()
	namesTask    = memberNames[Task]()
	namesPR      = memberNames[PR]()
	namesTarget  = memberNames[Target]()
	namesVCS     = memberNames[VCS]()
	namesEvent   = memberNames[Event]()
)

// memberNames lists the json tags of T's fields (every field of a map's
// records has one).
func memberNames[T any]() []string {
	var names []string
	for f := range reflect.TypeFor[T]().Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" || tag == "-" {
			panic("mapfile: a field of " + reflect.TypeFor[T]().Name() + " without a json name")
		}
		names = append(names, tag)
	}
	return names
}

// The scalar readers take null as encoding/json does: it leaves the field
// as it is (zero: a member given twice is refused) and sets a pointer to
// nil.

func str(d *jsondec.Decoder, s *string) bool { return d.Literal("null") || d.Str(s) }

func intPtr(d *jsondec.Decoder, v **int) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	*v = new(int)
	return d.Int(*v)
}

func int64Ptr(d *jsondec.Decoder, v **int64) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	*v = new(int64)
	return d.Int64(*v)
}

// counts reads a map[string]int; a name given twice keeps its last count,
// as encoding/json keeps it.
func counts(d *jsondec.Decoder, v *map[string]int) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	if !d.Byte('{') {
		return false
	}
	m := map[string]int{}
	if !d.Byte('}') {
		for {
			var k string
			var n int
			if !d.Str(&k) || !d.Byte(':') || !d.Int(&n) {
				return false
			}
			m[k] = n
			if d.Byte('}') {
				break
			}
			if !d.Byte(',') {
				return false
			}
		}
	}
	*v = m
	return true
}

// record reads a struct member (null leaves it as it is).
func record[T any](d *jsondec.Decoder, v *T, member jsondec.Member[T], names []string) bool {
	return d.Literal("null") || jsondec.ObjectOf(d, v, member, names)
}

// The records' members; a member's number is its place in the record.

func memberMap(d *jsondec.Decoder, v *Map, k []byte) int {
	switch string(k) {
	case "schema":
		return jsondec.Field(0, str(d, &v.Schema))
	case "contentHash":
		return jsondec.Field(1, str(d, &v.ContentHash))
	case "session":
		return jsondec.Field(2, record(d, &v.Session, memberSession, namesSession))
	case "totals":
		return jsondec.Field(3, record(d, &v.Totals, memberTotals, namesTotals))
	case "repos":
		return jsondec.Field(4, jsondec.RecordsOf(d, &v.Repos, memberRepo, namesRepo))
	case "files":
		return jsondec.Field(5, jsondec.RecordsOf(d, &v.Files, memberFile, namesFile))
	case "agents":
		return jsondec.Field(6, jsondec.RecordsOf(d, &v.Agents, memberAgent, namesAgent))
	case "tasks":
		return jsondec.Field(7, jsondec.RecordsOf(d, &v.Tasks, memberTask, namesTask))
	case "prs":
		return jsondec.Field(8, jsondec.RecordsOf(d, &v.PRs, memberPR, namesPR))
	case "events":
		return jsondec.Field(eventsMember, jsondec.RecordsOf(d, &v.Events, memberEvent, namesEvent))
	}
	return jsondec.Unknown
}

func memberSession(d *jsondec.Decoder, v *Session, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, str(d, &v.ID))
	case "agentTool":
		return jsondec.Field(1, str(d, &v.AgentTool))
	case "cliVersion":
		return jsondec.Field(2, str(d, &v.CLIVersion))
	case "startedAt":
		return jsondec.Field(3, str(d, &v.StartedAt))
	case "durationMs":
		return jsondec.Field(4, d.Literal("null") || d.Int64(&v.DurationMs))
	case "models":
		return jsondec.Field(5, jsondec.Strings(d, &v.Models))
	case "pathMode":
		return jsondec.Field(6, str(d, &v.PathMode))
	case "truncated":
		return jsondec.Field(7, d.Literal("null") || d.Bool(&v.Truncated))
	case "outcome":
		return jsondec.Field(8, str(d, &v.Outcome))
	case "role":
		return jsondec.Field(9, str(d, &v.Role))
	case "parentSessionId":
		return jsondec.Field(10, str(d, &v.ParentSessionID))
	}
	return jsondec.Unknown
}

func memberTotals(d *jsondec.Decoder, v *Totals, k []byte) int {
	switch string(k) {
	case "calls":
		return jsondec.Field(0, d.Literal("null") || d.Int(&v.Calls))
	case "requests":
		return jsondec.Field(1, d.Literal("null") || d.Int(&v.Requests))
	case "userTurns":
		return jsondec.Field(2, d.Literal("null") || d.Int(&v.UserTurns))
	case "subagents":
		return jsondec.Field(3, d.Literal("null") || d.Int(&v.Subagents))
	case "errors":
		return jsondec.Field(4, d.Literal("null") || d.Int(&v.Errors))
	case "tokens":
		return jsondec.Field(5, d.Literal("null") || d.Int64(&v.Tokens))
	case "costUsd":
		return jsondec.Field(6, d.Literal("null") || d.Float(&v.CostUSD))
	case "filesTouched":
		return jsondec.Field(7, d.Literal("null") || d.Int(&v.FilesTouched))
	case "outputTokens":
		return jsondec.Field(8, d.Literal("null") || d.Int64(&v.OutputTokens))
	case "commits":
		return jsondec.Field(9, d.Literal("null") || d.Int(&v.Commits))
	case "prsCreated":
		return jsondec.Field(10, d.Literal("null") || d.Int(&v.PRsCreated))
	case "errorsBySource":
		return jsondec.Field(11, counts(d, &v.ErrorsBySource))
	case "errorsByClass":
		return jsondec.Field(12, counts(d, &v.ErrorsByClass))
	case "retries":
		return jsondec.Field(13, d.Literal("null") || d.Int(&v.Retries))
	case "delays":
		return jsondec.Field(14, d.Literal("null") || d.Int(&v.Delays))
	case "delayMs":
		return jsondec.Field(15, d.Literal("null") || d.Int64(&v.DelayMs))
	case "maxContext":
		return jsondec.Field(16, d.Literal("null") || d.Int64(&v.MaxContext))
	case "compactions":
		return jsondec.Field(17, d.Literal("null") || d.Int(&v.Compactions))
	case "llmLatencyP50":
		return jsondec.Field(18, d.Literal("null") || d.Int64(&v.LLMLatencyP50))
	case "llmLatencyP95":
		return jsondec.Field(19, d.Literal("null") || d.Int64(&v.LLMLatencyP95))
	}
	return jsondec.Unknown
}

func memberRepo(d *jsondec.Decoder, v *Repo, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, str(d, &v.ID))
	case "name":
		return jsondec.Field(1, str(d, &v.Name))
	case "remote":
		return jsondec.Field(2, str(d, &v.Remote))
	}
	return jsondec.Unknown
}

func memberFile(d *jsondec.Decoder, v *File, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, d.Literal("null") || d.Int(&v.ID))
	case "repo":
		return jsondec.Field(1, str(d, &v.Repo))
	case "path":
		return jsondec.Field(2, str(d, &v.Path))
	case "reads":
		return jsondec.Field(3, d.Literal("null") || d.Int(&v.Reads))
	case "edits":
		return jsondec.Field(4, d.Literal("null") || d.Int(&v.Edits))
	case "hits":
		return jsondec.Field(5, d.Literal("null") || d.Int(&v.Hits))
	case "op":
		return jsondec.Field(6, str(d, &v.Op))
	}
	return jsondec.Unknown
}

func memberAgent(d *jsondec.Decoder, v *Agent, k []byte) int {
	switch string(k) {
	case "id":
		return jsondec.Field(0, str(d, &v.ID))
	case "parent":
		return jsondec.Field(1, str(d, &v.Parent))
	case "kind":
		return jsondec.Field(2, str(d, &v.Kind))
	case "subagentType":
		return jsondec.Field(3, str(d, &v.SubagentType))
	case "model":
		return jsondec.Field(4, str(d, &v.Model))
	case "launchSeq":
		return jsondec.Field(5, intPtr(d, &v.LaunchSeq))
	case "start":
		return jsondec.Field(6, d.Literal("null") || d.Int64(&v.Start))
	case "end":
		return jsondec.Field(7, d.Literal("null") || d.Int64(&v.End))
	case "calls":
		return jsondec.Field(8, d.Literal("null") || d.Int(&v.Calls))
	case "requests":
		return jsondec.Field(9, d.Literal("null") || d.Int(&v.Requests))
	case "tokens":
		return jsondec.Field(10, d.Literal("null") || d.Int64(&v.Tokens))
	case "cost":
		return jsondec.Field(11, d.Literal("null") || d.Float(&v.Cost))
	case "outcome":
		return jsondec.Field(12, str(d, &v.Outcome))
	}
	return jsondec.Unknown
}

func memberTask(d *jsondec.Decoder, v *Task, k []byte) int {
	switch string(k) {
	case "n":
		return jsondec.Field(0, d.Literal("null") || d.Int(&v.N))
	case "name":
		return jsondec.Field(1, str(d, &v.Name))
	case "source":
		return jsondec.Field(2, str(d, &v.Source))
	case "startSeq":
		return jsondec.Field(3, d.Literal("null") || d.Int(&v.StartSeq))
	case "endSeq":
		return jsondec.Field(4, d.Literal("null") || d.Int(&v.EndSeq))
	case "startT":
		return jsondec.Field(5, d.Literal("null") || d.Int64(&v.StartT))
	case "endT":
		return jsondec.Field(6, d.Literal("null") || d.Int64(&v.EndT))
	}
	return jsondec.Unknown
}

func memberPR(d *jsondec.Decoder, v *PR, k []byte) int {
	switch string(k) {
	case "provider":
		return jsondec.Field(0, str(d, &v.Provider))
	case "repo":
		return jsondec.Field(1, str(d, &v.Repo))
	case "number":
		return jsondec.Field(2, d.Literal("null") || d.Int(&v.Number))
	case "seq":
		return jsondec.Field(3, d.Literal("null") || d.Int(&v.Seq))
	case "state":
		return jsondec.Field(4, str(d, &v.State))
	}
	return jsondec.Unknown
}

func memberTarget(d *jsondec.Decoder, v *Target, k []byte) int {
	switch string(k) {
	case "file":
		return jsondec.Field(0, intPtr(d, &v.File))
	case "scope":
		return jsondec.Field(1, str(d, &v.Scope))
	case "label":
		return jsondec.Field(2, str(d, &v.Label))
	case "touch":
		return jsondec.Field(3, str(d, &v.Touch))
	case "op":
		return jsondec.Field(4, str(d, &v.Op))
	}
	return jsondec.Unknown
}

func memberVCS(d *jsondec.Decoder, v *VCS, k []byte) int {
	switch string(k) {
	case "provider":
		return jsondec.Field(0, str(d, &v.Provider))
	case "action":
		return jsondec.Field(1, str(d, &v.Action))
	case "repo":
		return jsondec.Field(2, str(d, &v.Repo))
	case "number":
		return jsondec.Field(3, d.Literal("null") || d.Int(&v.Number))
	}
	return jsondec.Unknown
}

func memberEvent(d *jsondec.Decoder, v *Event, k []byte) int {
	switch string(k) {
	case "seq":
		return jsondec.Field(0, d.Literal("null") || d.Int(&v.Seq))
	case "t":
		return jsondec.Field(1, d.Literal("null") || d.Int64(&v.T))
	case "kind":
		return jsondec.Field(2, str(d, &v.Kind))
	case "agent":
		return jsondec.Field(3, str(d, &v.Agent))
	case "err":
		return jsondec.Field(4, d.Literal("null") || d.Bool(&v.Err))
	case "task":
		return jsondec.Field(5, d.Literal("null") || d.Int(&v.Task))
	case "model":
		return jsondec.Field(6, str(d, &v.Model))
	case "cat":
		return jsondec.Field(7, str(d, &v.Cat))
	case "tool":
		return jsondec.Field(8, str(d, &v.Tool))
	case "verb":
		return jsondec.Field(9, str(d, &v.Verb))
	case "targets":
		return jsondec.Field(10, jsondec.RecordsOf(d, &v.Targets, memberTarget, namesTarget))
	case "outBytes":
		return jsondec.Field(11, int64Ptr(d, &v.OutBytes))
	case "dur":
		return jsondec.Field(12, int64Ptr(d, &v.Dur))
	case "vcs":
		return jsondec.Field(13, jsondec.RecordOf(d, &v.VCS, memberVCS, namesVCS))
	case "server":
		return jsondec.Field(14, str(d, &v.Server))
	case "skill":
		return jsondec.Field(15, str(d, &v.Skill))
	case "subagentType":
		return jsondec.Field(16, str(d, &v.SubagentType))
	case "child":
		return jsondec.Field(17, str(d, &v.Child))
	case "host":
		return jsondec.Field(18, str(d, &v.Host))
	case "errClass":
		return jsondec.Field(19, str(d, &v.ErrClass))
	case "exitCode":
		return jsondec.Field(20, intPtr(d, &v.ExitCode))
	case "retryOf":
		return jsondec.Field(21, intPtr(d, &v.RetryOf))
	case "attempt":
		return jsondec.Field(22, d.Literal("null") || d.Int(&v.Attempt))
	case "in":
		return jsondec.Field(23, d.Literal("null") || d.Int64(&v.In))
	case "cw":
		return jsondec.Field(24, d.Literal("null") || d.Int64(&v.CW))
	case "cr":
		return jsondec.Field(25, d.Literal("null") || d.Int64(&v.CR))
	case "out":
		return jsondec.Field(26, d.Literal("null") || d.Int64(&v.Out))
	case "cost":
		return jsondec.Field(27, d.Literal("null") || d.Float(&v.Cost))
	case "latency":
		return jsondec.Field(28, int64Ptr(d, &v.Latency))
	case "stop":
		return jsondec.Field(29, str(d, &v.Stop))
	case "thinking":
		return jsondec.Field(30, d.Literal("null") || d.Bool(&v.Thinking))
	case "toolCalls":
		return jsondec.Field(31, d.Literal("null") || d.Int(&v.ToolCalls))
	case "textChars":
		return jsondec.Field(32, d.Literal("null") || d.Int(&v.TextChars))
	case "chars":
		return jsondec.Field(33, d.Literal("null") || d.Int(&v.Chars))
	case "images":
		return jsondec.Field(34, d.Literal("null") || d.Int(&v.Images))
	case "urls":
		return jsondec.Field(35, d.Literal("null") || d.Int(&v.URLs))
	case "source":
		return jsondec.Field(36, str(d, &v.Source))
	case "hook":
		return jsondec.Field(37, str(d, &v.Hook))
	case "hookEvent":
		return jsondec.Field(38, str(d, &v.HookEvent))
	case "ref":
		return jsondec.Field(39, intPtr(d, &v.Ref))
	case "retry":
		return jsondec.Field(40, d.Literal("null") || d.Int(&v.Retry))
	case "cause":
		return jsondec.Field(41, str(d, &v.Cause))
	case "ms":
		return jsondec.Field(42, d.Literal("null") || d.Int64(&v.Ms))
	case "trigger":
		return jsondec.Field(43, str(d, &v.Trigger))
	case "preTokens":
		return jsondec.Field(44, d.Literal("null") || d.Int64(&v.PreTokens))
	case "postTokens":
		return jsondec.Field(45, d.Literal("null") || d.Int64(&v.PostTokens))
	case "repo":
		return jsondec.Field(46, str(d, &v.Repo))
	case "sha":
		return jsondec.Field(47, str(d, &v.SHA))
	case "files":
		return jsondec.Field(48, d.Literal("null") || d.Int(&v.Files))
	case "ins":
		return jsondec.Field(49, d.Literal("null") || d.Int(&v.Ins))
	case "del":
		return jsondec.Field(50, d.Literal("null") || d.Int(&v.Del))
	case "number":
		return jsondec.Field(51, d.Literal("null") || d.Int(&v.Number))
	case "tracker":
		return jsondec.Field(52, str(d, &v.Tracker))
	case "action":
		return jsondec.Field(53, str(d, &v.Action))
	case "id":
		return jsondec.Field(54, str(d, &v.ID))
	case "name":
		return jsondec.Field(55, str(d, &v.Name))
	case "from":
		return jsondec.Field(56, str(d, &v.From))
	case "to":
		return jsondec.Field(57, str(d, &v.To))
	}
	return jsondec.Unknown
}
