package state

import "github.com/agentmap/agentmap/internal/jsondec"

// Source and session records are read at every start and every scan (and
// checked once more when the database is opened): with encoding/json's
// reflection that was a quarter of a scan with nothing new. decodeFast
// reads a record as json.Marshal writes it, member by member
// (internal/jsondec), into a zero record, and reports false where
// encoding/json must decide; decodeRecord then hands it the value.

// decodeFast decodes payload into into when it is a *Source or *Session
// that is zero but for the field JSON leaves alone (json:"-": a source's
// id, a session's key; encoding/json would merge into anything else) and
// the reader accepts it all; into is left as it was otherwise.
func decodeFast(payload []byte, into any) bool {
	d := jsondec.New(payload)
	switch v := into.(type) {
	case *Source:
		s := Source{ID: v.ID}
		if *v != s || !jsondec.Object(&d, &s, memberSource) || !d.Done() {
			return false
		}
		*v = s
		return true
	case *Session:
		s := Session{Key: v.Key}
		if *v != s || !jsondec.Object(&d, &s, memberSession) || !d.Done() {
			return false
		}
		*v = s
		return true
	}
	return false
}

func memberSource(d *jsondec.Decoder, v *Source, k []byte) int {
	switch string(k) {
	case "path":
		return jsondec.Field(0, d.Str(&v.Path))
	case "agent":
		return jsondec.Field(1, d.Str(&v.Agent))
	case "form":
		return jsondec.Field(2, d.Str(&v.Form))
	case "session":
		return jsondec.Field(3, d.Str(&v.Session))
	case "lane":
		return jsondec.Field(4, d.Str(&v.Lane))
	case "parent":
		return jsondec.Field(5, d.Str(&v.ParentSession))
	case "childLane":
		return jsondec.Field(6, d.Str(&v.ChildLane))
	case "dev":
		return jsondec.Field(7, d.Uint64(&v.Dev))
	case "ino":
		return jsondec.Field(8, d.Uint64(&v.Ino))
	case "headLen":
		return jsondec.Field(9, d.Int(&v.HeadLen))
	case "head":
		return jsondec.Field(10, d.Str(&v.HeadHash))
	case "offset":
		return jsondec.Field(11, d.Int64(&v.Offset))
	case "tail":
		return jsondec.Field(12, d.Str(&v.TailHash))
	case "sum":
		return jsondec.Field(13, d.Str(&v.Sum))
	case "size":
		return jsondec.Field(14, d.Int64(&v.Size))
	case "mod":
		return jsondec.Field(15, d.Int64(&v.ModMs))
	case "digest":
		return jsondec.Field(16, d.Str(&v.Digest))
	case "lines":
		return jsondec.Field(17, d.Int64(&v.Lines))
	case "skipped":
		return jsondec.Field(18, d.Int64(&v.Skipped))
	case "oversized":
		return jsondec.Field(19, d.Int64(&v.Oversized))
	case "bytes":
		return jsondec.Field(20, d.Int64(&v.Bytes))
	case "resets":
		return jsondec.Field(21, d.Int64(&v.Resets))
	case "sidecar":
		return jsondec.Field(22, d.Bool(&v.Sidecar))
	case "seq":
		return jsondec.Field(23, d.Uint64(&v.NextSeq))
	case "missing":
		return jsondec.Field(24, d.Bool(&v.Missing))
	case "parsed":
		return jsondec.Field(25, d.Int(&v.Parsed))
	}
	return -1
}

func memberSession(d *jsondec.Decoder, v *Session, k []byte) int {
	switch string(k) {
	case "agent":
		return jsondec.Field(0, d.Str(&v.Agent))
	case "id":
		return jsondec.Field(1, d.Str(&v.NativeID))
	case "parent":
		return jsondec.Field(2, d.Str(&v.Parent))
	case "childLane":
		return jsondec.Field(3, d.Str(&v.ChildLane))
	case "gen":
		return jsondec.Field(4, d.Uint64(&v.Gen))
	case "activity":
		return jsondec.Field(5, d.Int64(&v.ActivityMs))
	case "turnEnd":
		return jsondec.Field(6, d.Bool(&v.TurnEnd))
	case "ended":
		return jsondec.Field(7, d.Int64(&v.EndedMs))
	case "flush":
		return jsondec.Field(8, jsondec.Record(d, &v.Flush, memberFlush))
	}
	return -1
}

func memberFlush(d *jsondec.Decoder, v *Flush, k []byte) int {
	switch string(k) {
	case "path":
		return jsondec.Field(0, d.Str(&v.Path))
	case "sha256":
		return jsondec.Field(1, d.Str(&v.SHA256))
	case "gen":
		return jsondec.Field(2, d.Uint64(&v.Gen))
	case "events":
		return jsondec.Field(3, d.Int(&v.Events))
	case "at":
		return jsondec.Field(4, d.Int64(&v.AtMs))
	case "summary":
		return jsondec.Field(5, jsondec.Object(d, &v.Sum, memberSummary))
	case "options":
		return jsondec.Field(6, d.Str(&v.Options))
	case "size":
		return jsondec.Field(7, d.Int64(&v.Size))
	}
	return -1
}

func memberSummary(d *jsondec.Decoder, v *Summary, k []byte) int {
	switch string(k) {
	case "events":
		return jsondec.Field(0, d.Int(&v.Events))
	case "calls":
		return jsondec.Field(1, d.Int(&v.Calls))
	case "requests":
		return jsondec.Field(2, d.Int(&v.Requests))
	case "errors":
		return jsondec.Field(3, d.Int(&v.Errors))
	case "tokens":
		return jsondec.Field(4, d.Int64(&v.Tokens))
	case "costUsd":
		return jsondec.Field(5, d.Float(&v.CostUSD))
	case "unpriced":
		return jsondec.Field(6, jsondec.Strings(d, &v.Unpriced))
	case "outcome":
		return jsondec.Field(7, d.Str(&v.Outcome))
	case "startedAt":
		return jsondec.Field(8, d.Str(&v.StartedAt))
	case "durationMs":
		return jsondec.Field(9, d.Int64(&v.DurationMs))
	case "repos":
		return jsondec.Field(10, jsondec.Strings(d, &v.Repos))
	case "noUsage":
		return jsondec.Field(11, d.Int(&v.NoUsage))
	}
	return -1
}
