package attemptdb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Section names of a conformance report, in report order.
var Sections = []string{"envelope", "identity", "temporal", "causality", "provenance", "extensions"}

// Finding is one failure or note; Line is 1-based (0: the whole stream).
type Finding struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Section holds one rule group's findings.
type Section struct {
	Failures []Finding `json:"failures"`
	Notes    []Finding `json:"notes"`
}

// Report is the result of Check, shaped like `attempt conformance --json`.
type Report struct {
	SchemaVersion int                 `json:"schema_version"`
	Lines         int                 `json:"lines"`
	Events        int                 `json:"events"`
	Sections      map[string]*Section `json:"-"`
}

// MarshalJSON writes the report as `attempt conformance --json` does: the
// six sections as top-level keys beside schema_version, lines and events.
func (r *Report) MarshalJSON() ([]byte, error) {
	out := map[string]any{"schema_version": r.SchemaVersion, "lines": r.Lines, "events": r.Events}
	for _, name := range Sections {
		out[name] = r.Sections[name]
	}
	return json.Marshal(out)
}

// Compatible reports whether no rule failed; notes never decide.
func (r *Report) Compatible() bool { return r.FailureCount() == 0 }

// FailureCount is the number of failures in all sections.
func (r *Report) FailureCount() int {
	n := 0
	for _, s := range r.Sections {
		n += len(s.Failures)
	}
	return n
}

// String lists the failures, one a line.
func (r *Report) String() string {
	var b strings.Builder
	for _, name := range Sections {
		for _, f := range r.Sections[name].Failures {
			fmt.Fprintf(&b, "%s: line %d: %s\n", name, f.Line, f.Message)
		}
	}
	return b.String()
}

func (r *Report) fail(section string, line int, format string, args ...any) {
	s := r.Sections[section]
	s.Failures = append(s.Failures, Finding{line, fmt.Sprintf(format, args...)})
}

func (r *Report) note(section string, line int, format string, args ...any) {
	s := r.Sections[section]
	s.Notes = append(s.Notes, Finding{line, fmt.Sprintf(format, args...)})
}

// parsed is what the rules read from one line that parsed.
type parsed struct {
	line                              int
	eventID, deviceID                 string
	schemaVersion                     uint64
	sourceSeq, hlc                    uint64
	observedAt, capturedAt            int64
	provider, providerSessionID       string
	sessionID                         string
	adapterVersion, providerEventName string
	captureMode, kind                 string
	projectID, root, name             string
	agentID                           string
	hasAgentID                        bool
	spanID, parentSpanID              string
	callID                            string
	hasContent, hasRaw                bool
	attrs                             map[string]json.RawMessage
	unknownTop                        []string
}

// Check applies every rule of `attempt conformance` (AttemptDB Event v1 at
// the published schema's commit) to a stream of JSON lines. It does not
// run the JSON Schema: a conformant stream passes both.
func Check(r io.Reader) (*Report, error) {
	rep := &Report{SchemaVersion: 1, Sections: map[string]*Section{}}
	for _, s := range Sections {
		rep.Sections[s] = &Section{Failures: []Finding{}, Notes: []Finding{}}
	}
	var events []*parsed
	br := bufio.NewReaderSize(r, 1<<20)
	lineNo := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			lineNo++
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(bytes.TrimSpace(line)) > 0 {
				rep.Lines++
				p, msg := parseEvent(line)
				if p == nil {
					rep.fail("envelope", lineNo, "does not parse as an Event: %s", msg)
				} else {
					p.line = lineNo
					rep.Events++
					events = append(events, p)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read stream at line %d: %w", lineNo+1, err)
		}
	}
	checkEnvelope(rep, events)
	checkIdentity(rep, events)
	checkTemporal(rep, events)
	checkCausality(rep, events)
	checkProvenance(rep, events)
	checkExtensions(rep, events)
	return rep, nil
}

func checkEnvelope(rep *Report, events []*parsed) {
	first := map[[16]byte]int{}
	for _, e := range events {
		if e.schemaVersion != 1 {
			rep.fail("envelope", e.line, "schema_version is %d, not 1", e.schemaVersion)
		}
		id, _ := parseLenientUUID(e.eventID)
		if id == ([16]byte{}) {
			rep.fail("envelope", e.line, "event_id is the nil UUID")
		} else if at, dup := first[id]; dup {
			rep.fail("envelope", at, "event_id repeated on line %d", e.line)
		} else {
			first[id] = e.line
		}
		if dev, _ := parseLenientUUID(e.deviceID); dev == ([16]byte{}) {
			rep.fail("envelope", e.line, "device_id is the nil UUID")
		}
	}
}

func checkIdentity(rep *Report, events []*parsed) {
	for _, e := range events {
		if e.provider == "" {
			rep.fail("identity", e.line, "provider is empty")
		}
		if e.providerSessionID == "" {
			rep.fail("identity", e.line, "provider_session_id is empty")
		} else {
			got, _ := parseLenientUUID(e.sessionID)
			want, _ := parseUUID(Derive(prefixSession, e.provider, e.providerSessionID))
			if got != want {
				rep.fail("identity", e.line, "session_id does not derive from (provider, provider_session_id)")
			}
		}
		if p, _ := parseLenientUUID(e.projectID); p == ([16]byte{}) {
			rep.fail("identity", e.line, "project.project_id is the nil UUID")
		}
		if e.root == "" {
			rep.fail("identity", e.line, "project.root is empty")
		}
		if e.name == "" {
			rep.fail("identity", e.line, "project.name is empty")
		}
		if a, _ := parseLenientUUID(e.agentID); !e.hasAgentID || a == ([16]byte{}) {
			rep.note("identity", e.line, "agent.agent_id absent or nil; derived ids are recommended")
		}
	}
}

func checkTemporal(rep *Report, events []*parsed) {
	lastSeq := map[[16]byte]uint64{}
	lastHLC := map[[16]byte]uint64{}
	notIngested := 0
	for _, e := range events {
		if e.observedAt <= 0 {
			rep.fail("temporal", e.line, "observed_at is not positive")
		}
		if e.capturedAt < 0 {
			rep.fail("temporal", e.line, "captured_at is negative")
		}
		if e.sourceSeq == 0 && e.hlc == 0 {
			notIngested++
			continue
		}
		dev, _ := parseLenientUUID(e.deviceID)
		if e.sourceSeq != 0 {
			if prev, ok := lastSeq[dev]; ok {
				switch {
				case e.sourceSeq <= prev:
					rep.fail("temporal", e.line, "source_seq %d does not increase (previous %d)", e.sourceSeq, prev)
				case e.sourceSeq > prev+1:
					rep.note("temporal", e.line, "source_seq gap: %d after %d", e.sourceSeq, prev)
				}
			}
			lastSeq[dev] = e.sourceSeq
		}
		if e.hlc != 0 {
			if prev, ok := lastHLC[dev]; ok && e.hlc <= prev {
				rep.fail("temporal", e.line, "hlc does not increase")
			}
			lastHLC[dev] = e.hlc
		}
	}
	if notIngested > 0 {
		rep.note("temporal", 0, "%d event(s) not yet ingested (source_seq and hlc both 0)", notIngested)
	}
}

func checkCausality(rep *Report, events []*parsed) {
	spans := map[[16]byte]bool{}
	for _, e := range events {
		if e.spanID != "" {
			s, _ := parseLenientUUID(e.spanID)
			spans[s] = true
		}
	}
	started := map[string]bool{}
	for _, e := range events {
		if e.parentSpanID != "" {
			p, _ := parseLenientUUID(e.parentSpanID)
			if !spans[p] {
				rep.fail("causality", e.line, "parent_span_id does not resolve to a span_id in the stream")
			}
		}
		if e.callID == "" {
			continue
		}
		key := e.sessionID + "\x00" + e.callID
		switch e.kind {
		case "tool_call_started":
			started[key] = true
		case "tool_call_finished", "tool_call_failed":
			if !started[key] {
				rep.note("causality", e.line, "%s without an earlier tool_call_started", e.kind)
			}
		}
	}
}

func checkProvenance(rep *Report, events []*parsed) {
	for _, e := range events {
		if e.adapterVersion == "" {
			rep.fail("provenance", e.line, "adapter_version is empty")
		}
		if e.providerEventName == "" {
			rep.fail("provenance", e.line, "provider_event_name is empty")
		}
		if e.captureMode == "metadata_only" {
			if e.hasContent {
				rep.fail("provenance", e.line, "content present under metadata_only")
			}
			if e.hasRaw {
				rep.fail("provenance", e.line, "raw present under metadata_only")
			}
		}
		if e.kind == "unknown" {
			rep.note("provenance", e.line, "kind unknown (provider_event_name kept)")
		}
	}
}

func checkExtensions(rep *Report, events []*parsed) {
	for _, e := range events {
		for k, raw := range e.attrs {
			if !AttrKeyAllowed(k) {
				rep.fail("extensions", e.line, "attrs key %s is neither allowlisted nor x_<provider>_<name>", keyForMessage(k))
				continue
			}
			if !attrValueAllowed(k, raw) {
				rep.fail("extensions", e.line, "attrs value of %s is not content-free", keyForMessage(k))
			}
		}
		for _, k := range e.unknownTop {
			if !topKeyAllowed(k) {
				rep.fail("extensions", e.line, "top-level key %s is not x_<name>", keyForMessage(k))
			}
		}
	}
}

// keyForMessage names a key only when it looks like a field name, so a
// report never repeats content that was put into a key.
func keyForMessage(k string) string {
	if len(k) <= 64 && lowerIdent(strings.ToLower(k)) {
		return k
	}
	return "(unprintable key)"
}

func attrValueAllowed(key string, raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return ValueAllowed(x)
	case []any:
		for _, el := range x {
			if s, ok := el.(string); ok && !ValueAllowed(s) {
				return false
			}
		}
	case map[string]any:
		if key != "provider" {
			return false
		}
		for _, el := range x {
			if s, ok := el.(string); ok && !ValueAllowed(s) {
				return false
			}
		}
	}
	return true
}

// The structural parse mirrors deserialising into AttemptDB's Event:
// required fields, enums, integer widths and lenient UUIDs.

var kinds = setOf(`session_started session_ended prompt_submitted tool_call_started tool_call_finished
	tool_call_failed permission_requested permission_denied notification agent_message turn_stopped
	turn_failed subagent_started subagent_stopped task_created task_completed compaction_started
	compaction_finished config_changed cwd_changed file_changed worktree_created worktree_removed
	correction retraction capture_test unknown`)
var captureModes = setOf("metadata_only local_semantic full_sync")
var toolCategories = setOf("shell file_read file_write file_edit search web mcp subagent plan notebook other")
var outcomeStatuses = setOf("success failure denied cancelled unknown")

var knownTop = setOf(`event_id schema_version device_id source_seq hlc observed_at captured_at ingested_at
	provider provider_version adapter_version hook_version capture_mode provider_event_name kind project
	session_id provider_session_id provider_turn_id span_id parent_span_id agent tool paths outcome
	duration_ms attrs content raw`)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

type fieldReader struct {
	obj map[string]json.RawMessage
	err string
}

func (f *fieldReader) failf(format string, args ...any) {
	if f.err == "" {
		f.err = fmt.Sprintf(format, args...)
	}
}

func present(obj map[string]json.RawMessage, k string) bool {
	v, ok := obj[k]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

func (f *fieldReader) str(obj map[string]json.RawMessage, k string, required bool) string {
	if !present(obj, k) {
		if required {
			f.failf("missing %s", k)
		}
		return ""
	}
	var s string
	if json.Unmarshal(obj[k], &s) != nil {
		f.failf("%s is not a string", k)
	}
	return s
}

func (f *fieldReader) uuid(obj map[string]json.RawMessage, k string, required bool) string {
	s := f.str(obj, k, required)
	if s != "" || present(obj, k) {
		if _, ok := parseLenientUUID(s); !ok {
			f.failf("%s is not a UUID", k)
		}
	}
	return s
}

func (f *fieldReader) integer(obj map[string]json.RawMessage, k string, required bool, lo, hi float64) (int64, uint64) {
	if !present(obj, k) {
		if required {
			f.failf("missing %s", k)
		}
		return 0, 0
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(obj[k]))
	dec.UseNumber()
	if dec.Decode(&n) != nil {
		f.failf("%s is not a number", k)
		return 0, 0
	}
	if lo >= 0 {
		u, err := parseUint(string(n))
		if err != nil || float64(u) > hi {
			f.failf("%s is not an integer in range", k)
		}
		return 0, u
	}
	i, err := n.Int64()
	if err != nil || float64(i) < lo || float64(i) > hi {
		f.failf("%s is not an integer in range", k)
	}
	return i, 0
}

func parseUint(s string) (uint64, error) {
	var u uint64
	if s == "" {
		return 0, fmt.Errorf("empty")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not an unsigned integer")
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("overflow")
		}
		u = u*10 + d
	}
	return u, nil
}

func (f *fieldReader) object(obj map[string]json.RawMessage, k string, required bool) map[string]json.RawMessage {
	if !present(obj, k) {
		if required {
			f.failf("missing %s", k)
		}
		return nil
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(obj[k], &o) != nil {
		f.failf("%s is not an object", k)
		return nil
	}
	return o
}

func (f *fieldReader) enum(obj map[string]json.RawMessage, k string, required bool, allowed map[string]bool) string {
	s := f.str(obj, k, required)
	if present(obj, k) && !allowed[s] {
		f.failf("%s is not one of its values", k)
	}
	return s
}

// parseEvent returns nil and a reason (never content) when the line does not
// deserialise as an Event.
func parseEvent(line []byte) (*parsed, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return nil, "not a JSON object"
	}
	f := &fieldReader{}
	p := &parsed{}
	p.eventID = f.uuid(obj, "event_id", true)
	_, p.schemaVersion = f.integer(obj, "schema_version", true, 0, math.MaxUint16)
	p.deviceID = f.uuid(obj, "device_id", true)
	_, p.sourceSeq = f.integer(obj, "source_seq", false, 0, math.MaxUint64)
	_, p.hlc = f.integer(obj, "hlc", false, 0, math.MaxUint64)
	p.observedAt, _ = f.integer(obj, "observed_at", true, math.MinInt64, math.MaxInt64)
	p.capturedAt, _ = f.integer(obj, "captured_at", true, math.MinInt64, math.MaxInt64)
	f.integer(obj, "ingested_at", false, math.MinInt64, math.MaxInt64)
	p.provider = NormalizeProvider(f.str(obj, "provider", true))
	f.str(obj, "provider_version", false)
	p.adapterVersion = f.str(obj, "adapter_version", true)
	f.str(obj, "hook_version", false)
	p.captureMode = f.enum(obj, "capture_mode", true, captureModes)
	p.providerEventName = f.str(obj, "provider_event_name", true)
	p.kind = f.enum(obj, "kind", true, kinds)
	if proj := f.object(obj, "project", true); proj != nil {
		p.projectID = f.uuid(proj, "project_id", true)
		p.root = f.str(proj, "root", true)
		p.name = f.str(proj, "name", true)
		f.str(proj, "repo_remote", false)
		f.str(proj, "branch", false)
		f.str(proj, "head", false)
	}
	p.sessionID = f.uuid(obj, "session_id", true)
	p.providerSessionID = f.str(obj, "provider_session_id", true)
	f.str(obj, "provider_turn_id", false)
	p.spanID = f.uuid(obj, "span_id", false)
	p.parentSpanID = f.uuid(obj, "parent_span_id", false)
	if ag := f.object(obj, "agent", false); ag != nil {
		p.agentID = f.uuid(ag, "agent_id", false)
		p.hasAgentID = present(ag, "agent_id")
		f.str(ag, "provider_agent_id", false)
		f.str(ag, "agent_type", false)
		f.uuid(ag, "parent_agent_id", false)
		f.str(ag, "model", false)
	}
	if tool := f.object(obj, "tool", false); tool != nil {
		f.str(tool, "name", true)
		f.enum(tool, "category", true, toolCategories)
		p.callID = f.str(tool, "call_id", false)
	}
	if present(obj, "paths") {
		var paths []map[string]json.RawMessage
		if json.Unmarshal(obj["paths"], &paths) != nil {
			f.failf("paths is not an array of objects")
		}
		for _, pa := range paths {
			f.str(pa, "original", true)
			f.str(pa, "logical", true)
			f.str(pa, "repo_relative", false)
			f.str(pa, "drive", false)
			if present(pa, "unc") {
				var b bool
				if json.Unmarshal(pa["unc"], &b) != nil {
					f.failf("paths[].unc is not a boolean")
				}
			}
		}
	}
	if out := f.object(obj, "outcome", false); out != nil {
		f.enum(out, "status", true, outcomeStatuses)
		f.str(out, "class", false)
		f.integer(out, "exit_code", false, math.MinInt32, math.MaxInt32)
	}
	f.integer(obj, "duration_ms", false, 0, math.MaxUint64)
	if present(obj, "attrs") {
		if json.Unmarshal(obj["attrs"], &p.attrs) != nil {
			f.failf("attrs is not an object")
		}
	}
	p.hasContent = present(obj, "content")
	p.hasRaw = present(obj, "raw")
	for k := range obj {
		if !knownTop[k] {
			p.unknownTop = append(p.unknownTop, k)
		}
	}
	if f.err != "" {
		return nil, f.err
	}
	return p, ""
}

// parseLenientUUID accepts what the Rust uuid crate does for the forms a
// writer might use: hyphenated or simple, any case.
func parseLenientUUID(s string) ([16]byte, bool) {
	l := strings.ToLower(s)
	if u, ok := parseUUID(l); ok {
		return u, true
	}
	var u [16]byte
	if len(l) == 32 {
		if _, err := fmtHexDecode(u[:], l); err == nil {
			return u, true
		}
	}
	return u, false
}
