package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// errInternal reports a parser fault on one record; the record is dropped.
var errInternal = errors.New("internal parser fault")

// Parser is the incremental parser of Codex rollout lines. It implements
// watchers.Parser.
type Parser struct {
	src   watchers.Source
	st    state
	paths *redact.Paths
	out   []event.Event
	// line and payload are filled from the line being read, kept so that
	// a line allocates no record to fill; nothing in them outlives Line.
	line   rawLine
	spares spares
	// outp and outBuf hold the tool output being read (see readOutput).
	outp   toolOutput
	outBuf []byte
	// argBuf holds the decoded arguments of the call being read, and args
	// their keys (see decodeArgs).
	argBuf []byte
	args   args
	// prefix is the response id prefix of session prefixOf (see msgID).
	prefix, prefixOf string
	// unknown counts record types the parser does not know, for tests and
	// diagnostics; it is not carry-state.
	unknown map[string]int
}

// NewParser returns a parser for a file routed to src.
func NewParser(src watchers.Source) *Parser {
	return &Parser{src: src, st: state{V: stateVersion}, paths: redact.NewPaths()}
}

// Restore returns a parser with the carry-state from State.
func Restore(src watchers.Source, b []byte) (*Parser, error) {
	p := NewParser(src)
	if len(b) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(b, &p.st); err != nil {
		return nil, fmt.Errorf("codex: restore state: %w", errors.New("invalid state"))
	}
	if p.st.V != stateVersion {
		return nil, fmt.Errorf("codex: restore state: version %d, want %d", p.st.V, stateVersion)
	}
	if len(p.st.Paths) > 0 {
		paths, err := redact.RestorePaths(p.st.Paths)
		if err != nil {
			return nil, fmt.Errorf("codex: restore paths: %w", err)
		}
		p.paths = paths
	}
	p.st.Paths = nil
	return p, nil
}

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) {
	ps, err := p.paths.MarshalState()
	if err != nil {
		return nil, fmt.Errorf("codex: paths state: %w", err)
	}
	st := p.st
	st.Paths = ps
	return json.Marshal(&st)
}

// Line implements watchers.Parser.
func (p *Parser) Line(line []byte, out []event.Event) (res []event.Event, err error) {
	p.st.N++
	n := p.st.N
	defer func() {
		if r := recover(); r != nil {
			res, err = out, fmt.Errorf("codex: record %d: %w", n, errInternal)
		}
		p.out = nil
	}()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return out, nil
	}
	if line[0] != '{' {
		return out, fmt.Errorf("codex: record %d: not a JSON object", n)
	}
	l := &p.line
	*l = rawLine{spare: &p.spares}
	if !scanLine(l, line) {
		// Something the walk does not mirror exactly, or invalid JSON:
		// encoding/json decides, and names the error.
		*l = rawLine{}
		if err := json.Unmarshal(line, l); err != nil && !isTypeError(err) {
			return out, fmt.Errorf("codex: record %d: invalid JSON%s", n, syntaxOffset(err))
		}
	}
	p.out = out
	l.normaliseIDs()
	if l.Payload != nil {
		l.Payload.normaliseIDs()
	}
	if !p.record(l) {
		return out, fmt.Errorf("codex: record %d: not a rollout record", n)
	}
	return p.out, nil
}

// record dispatches one decoded line by its form; it reports false for an
// object of no known form.
func (p *Parser) record(l *rawLine) bool {
	switch {
	case l.Payload != nil || rolloutTypes[l.Type] || ignoredTop[l.Type]:
		if p.st.Form == "" {
			p.st.Form = "wrapper"
		}
		ts, ok := parseTime(l.Timestamp)
		p.wrapper(l.Type, l.Payload, ts, ok)
	case l.Session != nil:
		if p.st.Form == "" {
			p.st.Form = "legacy"
		}
		p.legacyHeader(l.Session)
		for _, raw := range l.Items {
			p.wholeItem(raw)
		}
	case l.RecordType != "":
		// legacy {"record_type":"state"} markers carry nothing we keep
	case l.Type == "" && l.ID != "":
		p.legacyHeader(&l.item)
	case l.Type != "" || l.Role != "":
		if p.st.Form == "" {
			p.st.Form = "legacy"
		}
		p.bare(&l.item)
	default:
		return false
	}
	return true
}

// ignoredTop are rollout item types that hold nothing a map may keep.
var ignoredTop = map[string]bool{
	"world_state": true, "inter_agent_communication": true,
	"inter_agent_communication_metadata": true,
	// token_usage_record (0.17x) repeats, per response, what the
	// token_count after it totals; token_count stays the one source.
	"token_usage_record": true,
}

// wrapper handles one {timestamp, type, payload} line.
func (p *Parser) wrapper(typ string, pl *item, ts int64, ok bool) {
	if pl == nil {
		pl = &item{}
	}
	if ok && ts > p.st.T {
		p.st.T = ts
	}
	t := p.st.T
	if typ == "session_meta" {
		p.sessionMeta(pl, t)
		return
	}
	if p.st.Meta {
		p.st.Began = true
	}
	if p.inReplay(typ, pl, ts, ok) {
		p.replayed(typ, pl)
		return
	}
	switch typ {
	case "response_item":
		p.responseItem(pl, t)
	case "event_msg":
		p.eventMsg(pl, t)
	case "turn_context":
		p.turnContext(pl, t)
	case "compacted":
		p.compaction("item", t)
	default:
		if !ignoredTop[typ] {
			p.unknownType(typ)
		}
	}
}

// bare handles a legacy line: a ResponseItem without envelope or time.
func (p *Parser) bare(it *item) {
	t := p.st.T
	if it.Type == "" || (it.Type == "message" && it.Role == "user") {
		p.wholeChat(it, t)
		return
	}
	p.responseItem(it, t)
}

// legacyHeader handles {id, timestamp, instructions, git} (and the session
// object of the single-JSON form).
func (p *Parser) legacyHeader(h *item) {
	if ts, ok := parseTime(h.Timestamp); ok && ts > p.st.T {
		p.st.T = ts
	}
	if p.st.Meta {
		return
	}
	p.st.Meta, p.st.ID = true, h.ID
	p.emitSession(meta{id: h.ID}, "")
}

// sessionMeta handles session_meta. The first one defines the session; a
// resumed rollout repeats it (Codex Desktop writes it on every resume), and
// a repeat never re-emits or contradicts the session facts. A session_meta
// of another thread before any record of this one is the head of a copied
// history.
func (p *Parser) sessionMeta(pl *item, t int64) {
	m := metaOf(pl)
	if p.st.Meta {
		p.closeResponse()
		if m.id != "" && m.id != p.st.ID && !p.st.Began && p.st.Replay == 0 {
			p.openReplay()
		}
		if pl.CWD != "" && (m.id == "" || m.id == p.st.ID) && p.st.Replay == 0 {
			p.setCWD(pl.CWD)
		}
		return
	}
	p.st.Meta, p.st.ID = true, m.id
	p.emitSession(m, pl.CLIVersion)
	if p.st.Model == "" {
		p.st.Model = identifier(pl.Model)
	}
	if pl.CWD != "" {
		if pl.Git != nil {
			// The rollout says the directory was a repository: its root
			// and remote survive the directory.
			p.paths.DeclareRepo(pl.CWD, pl.Git.RepositoryURL)
		}
		p.setCWD(pl.CWD)
	}
	p.st.Born = bornAt(m.id, pl.Timestamp, t)
	p.st.Kin = m.child || m.forked
	if m.forked {
		p.openReplay()
	}
}

// openReplay starts the window of a copied history. Without turn ids to
// end it, it closes at the end of the thread's creation second: newer
// builds write the copy in one burst at that instant.
func (p *Parser) openReplay() {
	p.st.Replay = (p.st.Born/1000 + 1) * 1000
}

// bornAt is the creation time of a thread (Unix ms): the time in its
// UUIDv7 id when that agrees with the session_meta's own stamp within a
// day (test ids carry made-up times), the earlier of the two, else the
// stamp, else the line's time.
func bornAt(id string, stamp json.RawMessage, t int64) int64 {
	at, ok := parseTime(stamp)
	if !ok {
		at = t
	}
	if v, ok := uuidV7Time(id); ok && v < at && at-v < 24*3600*1000 {
		return v
	}
	return at
}

// emitSession emits the session facts.
func (p *Parser) emitSession(m meta, version string) {
	s := &event.Session{NativeID: p.src.Session, AgentTool: "codex", Role: "root", AgentVersion: version}
	if s.NativeID == "" {
		s.NativeID = m.id
	}
	if m.child || m.subagent {
		s.Role = "subagent"
		s.ParentNativeID = m.parent
		p.st.Sub = true
	}
	p.st.Sent = true
	p.out = append(p.out, event.Event{Kind: event.KindSession, T: p.st.T, Session: s})
}

// inReplay reports whether a record belongs to a parent history copied
// into this rollout (see doc.go, Replayed history): a spawned or forked
// thread's record stamped before the thread was born, or a record inside
// the copy window, which the thread's own first turn ends (a turn id
// newer than the thread), or, in builds without turn ids, the first
// record stamped after the creation second.
func (p *Parser) inReplay(typ string, pl *item, ts int64, ok bool) bool {
	if p.st.Kin && ok && ts < p.st.Born {
		return true
	}
	if p.st.Replay == 0 {
		return false
	}
	if at, has := uuidV7Time(turnIDOf(typ, pl)); has {
		if at >= p.st.Born {
			p.st.Replay, p.st.ReplayIDs = 0, false
			return false
		}
		p.st.ReplayIDs = true
		return true
	}
	if p.st.ReplayIDs || !ok || ts < p.st.Replay {
		return true
	}
	p.st.Replay = 0
	return false
}

// turnIDOf returns the turn id a turn's first records carry: turn_context
// and task_started (turn_started in some builds).
func turnIDOf(typ string, pl *item) string {
	switch {
	case typ == "turn_context":
	case typ == "event_msg" && (pl.Type == "task_started" || pl.Type == "turn_started"):
		if pl.TurnID == "" && pl.TurnAttribution != nil {
			return pl.TurnAttribution.TurnID
		}
	default:
		return ""
	}
	return pl.TurnID
}

// replayed reads a copied parent record only for what later records build
// on: the model in force and the cumulative token total, which becomes the
// baseline (it is the parent's usage, not this thread's).
func (p *Parser) replayed(typ string, pl *item) {
	switch {
	case typ == "turn_context":
		if m := contextModel(pl); m != "" {
			p.st.Model = m
		}
	case typ == "event_msg" && pl.Type == "token_count" && pl.Info != nil && pl.Info.Total != nil:
		p.st.Counters = []tokenUsage{*pl.Info.Total}
	}
}

// turnContext handles the per-turn settings: cwd and model.
func (p *Parser) turnContext(pl *item, t int64) {
	if pl.CWD != "" {
		p.setCWD(pl.CWD)
	}
	if m := contextModel(pl); m != "" {
		p.st.Model = m
		p.syncModel(t)
	}
}

func contextModel(pl *item) string {
	if pl.Model != "" {
		return identifier(pl.Model)
	}
	if cm := pl.CollaborationMode; cm != nil && cm.Settings != nil {
		return identifier(cm.Settings.Model)
	}
	return ""
}

// syncModel emits KindModel when the model in force changed.
func (p *Parser) syncModel(t int64) {
	if p.st.Model != "" && p.st.Model != p.st.ModelSent {
		p.st.ModelSent = p.st.Model
		p.emit(event.Event{Kind: event.KindModel, T: t, Model: p.st.Model})
	}
}

// setCWD records the working directory and declares new repos.
func (p *Parser) setCWD(cwd string) {
	p.paths.SetCWD(cwd)
	p.st.HasCWD = true
	p.flushRepos(p.st.T)
}

// flushRepos emits KindRepo for repos the resolver found since last time.
func (p *Parser) flushRepos(t int64) {
	for _, r := range p.paths.NewRepos() {
		r := r
		p.emit(event.Event{Kind: event.KindRepo, T: t, Repo: &r})
	}
}

// emit appends an event, declaring the session first if no record did.
func (p *Parser) emit(ev event.Event) {
	if !p.st.Sent {
		p.emitSession(meta{id: p.st.ID}, "")
	}
	if ev.T == 0 {
		ev.T = p.st.T
	}
	p.out = append(p.out, ev)
}

func (p *Parser) unknownType(typ string) {
	if p.unknown == nil {
		p.unknown = map[string]int{}
	}
	p.unknown[typ]++
}

// parseTime reads an RFC 3339 timestamp as Unix ms. Records stamped with
// anything else (fixtures trim them) keep the last known time.
func parseTime(raw json.RawMessage) (int64, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return 0, false
	}
	s := raw[1 : len(raw)-1]
	if ms, ok := utcMillis(s); ok {
		return ms, true
	}
	tm, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return 0, false
	}
	return tm.UnixMilli(), true
}

// utcMillis reads the form Codex stamps every line with,
// 2006-01-02T15:04:05[.999999999]Z, as time.Parse does (its own RFC 3339
// reading, whose checks these are), without making a string of it per
// line; ok is false for anything else, which time.Parse then reads.
func utcMillis(s []byte) (int64, bool) {
	const date = len("2006-01-02T15:04:05")
	if len(s) < date+1 || s[len(s)-1] != 'Z' ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := digitsIn(s[0:4], 0, 9999)
	month, ok2 := digitsIn(s[5:7], 1, 12)
	hour, ok3 := digitsIn(s[11:13], 0, 23)
	minute, ok4 := digitsIn(s[14:16], 0, 59)
	sec, ok5 := digitsIn(s[17:19], 0, 59)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return 0, false
	}
	day, ok := digitsIn(s[8:10], 1, daysIn(time.Month(month), year))
	if !ok {
		return 0, false
	}
	nsec, ok := fraction(s[date : len(s)-1])
	if !ok {
		return 0, false
	}
	secs := (civilDays(year, month, day)*24+int64(hour))*3600 + int64(minute)*60 + int64(sec)
	return secs*1000 + int64(nsec/1_000_000), true
}

// civilDays is the number of days from 1970-01-01 to a valid date of the
// proleptic Gregorian calendar (years counted from March, so that the leap
// day ends a year), as time.Date counts them, without its normalising.
func civilDays(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := year - era*400                     // [0, 399]
	doy := (153*((month+9)%12)+2)/5 + day - 1 // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy    // [0, 146096]
	return int64(era)*146097 + int64(doe) - 719468
}

// fraction reads the fractional second before the Z, "" or a period and
// digits, as nanoseconds: digits past the ninth are dropped, as time.Parse
// drops them.
func fraction(s []byte) (int, bool) {
	if len(s) == 0 {
		return 0, true
	}
	if len(s) < 2 || s[0] != '.' {
		return 0, false
	}
	ns, scale := 0, 1_000_000_000
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		if scale > 1 {
			scale /= 10
			ns += int(c-'0') * scale
		}
	}
	return ns, true
}

// digitsIn reads s, decimal digits only, as a number in [lo, hi].
func digitsIn(s []byte, lo, hi int) (int, bool) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, lo <= n && n <= hi
}

// daysIn is the number of days of month in year.
func daysIn(month time.Month, year int) int {
	if month == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return monthDays[month]
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// syntaxOffset names where a JSON error is, never what is there.
func syntaxOffset(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf(" at byte %d", se.Offset)
	}
	return ""
}
