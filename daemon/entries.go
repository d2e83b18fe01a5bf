package daemon

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
)

// Entry is one session of the map store, as `agentmap list` shows it.
type Entry struct {
	Key        string    `json:"key"` // agent/native id
	Agent      string    `json:"agent"`
	ID         string    `json:"id"`   // native id
	Path       string    `json:"path"` // relative to the map store
	Repos      []string  `json:"repos,omitempty"`
	Start      time.Time `json:"start,omitzero"`
	DurationMs int64     `json:"durationMs"`
	Calls      int       `json:"calls"`
	Requests   int       `json:"requests"`
	Errors     int       `json:"errors"`
	Tokens     int64     `json:"tokens"`
	CostUSD    float64   `json:"costUsd"`
	// Unpriced names the models whose tokens have no price (CostUSD
	// leaves them out).
	Unpriced []string `json:"unpriced,omitempty"`
	// NoUsage counts the requests whose log recorded no token usage
	// (every Cursor request): Tokens and CostUSD leave them out, so that
	// 0 tokens with NoUsage == Requests is "not recorded", not free. It
	// has the name show --json and usage --json give it.
	NoUsage int       `json:"requestsWithoutUsage,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	Flushed time.Time `json:"flushed,omitzero"`
	// Live is set when the session changed after its map was written.
	Live bool `json:"live,omitempty"`
	// Parent is the key of the session this one is also a lane of, as
	// the state records it (a Codex agent's thread); Recorded says the
	// entry comes from a state record, not from a map file alone, so
	// that an empty Parent means none.
	Parent   string `json:"parent,omitempty"`
	Recorded bool   `json:"recorded,omitempty"`
	// Unreadable is set when the map file is there but cannot be read
	// (damaged, cut short, not a map): a listing names it rather than
	// leaving it out in silence. Its figures are its record's, if any.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Entries lists the sessions of the store, newest first: from the flush
// records, and from the map files themselves for maps no record names (a
// state rebuilt from the logs, maps copied in) or records older than the
// summary's start and repos.
//
// The records are read one at a time and only their entries kept, not
// every source and session record at once (at 100,000 sessions those
// held some 200 MB more than the entries).
func Entries(db *state.DB, store *mapstore.Store) ([]Entry, error) {
	return entries(db, store, nil)
}

// EntriesNamed is Entries narrowed to the sessions n may name (every
// entry n.Matches, perhaps a few more): what `agentmap show ID` and
// `flush ID` look for among 100,000 sessions without decoding the
// record of each (see Named.mayBe).
func EntriesNamed(db *state.DB, store *mapstore.Store, n Named) ([]Entry, error) {
	return entries(db, store, &n)
}

func entries(db *state.DB, store *mapstore.Store, n *Named) ([]Entry, error) {
	var recorded []Entry
	if db != nil {
		p := state.Passes{Sessions: func(s *state.Session) error {
			if e, ok := recordEntry(s); ok {
				recorded = append(recorded, e)
			}
			return nil
		}}
		if n != nil {
			p.SessionsWhere = n.recordFilter()
		}
		if err := db.LoadPasses(p); err != nil {
			return nil, err
		}
	}
	// Maps are opened once the read transaction is over: a daemon's
	// commit that must grow the state's file waits for every reader.
	out := recorded[:0]
	seen := map[string]bool{}
	for _, e := range recorded {
		if e.Start.IsZero() {
			if err := fromMap(store, &e); errors.Is(err, fs.ErrNotExist) {
				continue // record of a map no longer there
			} else if err != nil {
				e.Unreadable = true
			}
		}
		seen[filepath.ToSlash(e.Path)] = true
		out = append(out, e)
	}
	var keep func(string) bool
	if n != nil {
		keep = func(name string) bool { return strings.HasPrefix(fileID(name), n.nativeID()) }
	}
	rels, err := store.ListNamed(keep)
	if err != nil {
		return nil, err
	}
	for _, rel := range rels {
		if seen[filepath.ToSlash(rel)] || n != nil && !n.mayBeFile(rel) {
			continue
		}
		e := Entry{Path: rel}
		switch err := fromMap(store, &e); {
		case err == nil:
			out = append(out, e)
		case !errors.Is(err, fs.ErrNotExist): // not gone meanwhile: damaged
			agent, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
			id := fileID(filepath.Base(rel))
			out = append(out, Entry{Path: rel, Agent: agent, ID: id, Key: agent + "/" + id, Unreadable: true})
		}
	}
	if n != nil {
		kept := out[:0]
		for _, e := range out {
			if n.Matches(e) {
				kept = append(kept, e)
			}
		}
		out = kept
	}
	SortEntries(out)
	return out, nil
}

// Named is what an id typed to show or flush names. Typed without an agent,
// the sessions whose id (their map's) starts with it, or the id of whose
// key (agent/id, the log's name, which may differ: a copied log) does;
// typed as agent/id, those whose key starts with it, or whose agent and
// map's id do. Key is the id typed with its agent spelled as the store's
// keys spell it (claude-code/X is claude/X), ID as typed.
type Named struct {
	ID  string `json:"id"`
	Key string `json:"key"`
}

// Matches reports whether n names e, by a prefix or whole.
func (n Named) Matches(e Entry) bool {
	if strings.Contains(n.Key, "/") {
		return strings.HasPrefix(e.Key, n.Key) || strings.HasPrefix(e.Agent+"/"+e.ID, n.Key)
	}
	_, keyID, _ := strings.Cut(e.Key, "/")
	return strings.HasPrefix(e.ID, n.ID) || strings.HasPrefix(keyID, n.ID)
}

// Exactly reports whether n names e whole: its id, its key, or its agent
// and id.
func (n Named) Exactly(e Entry) bool {
	if strings.Contains(n.Key, "/") {
		return e.Key == n.Key || e.Agent+"/"+e.ID == n.Key
	}
	_, keyID, _ := strings.Cut(e.Key, "/")
	return e.ID == n.ID || keyID == n.ID
}

// mayBe reports whether a session record, by its key and stored bytes, may
// be of an entry n names, or of a map file n names by its name, before it
// is decoded. An entry's id is its map file's name, which the record holds
// in the map's path: JSON writes an id of printable ASCII without quotes,
// backslashes or HTML's <, > and & as it is, so a record that does not
// hold the id typed (after its agent/, if any) is of neither. An id JSON
// would escape is looked for in every record.
//
// The records of the files n names by their names are all decoded, so
// that entries sees them as recorded, not as maps no record names.
func (n Named) mayBe(key, stored []byte) bool { return n.recordFilter()(key, stored) }

// recordFilter is mayBe with what it looks for made once: it runs over
// every record of the store.
func (n Named) recordFilter() func(key, stored []byte) bool {
	keyPrefix, idPrefix := []byte(nil), []byte(nil)
	if strings.Contains(n.Key, "/") {
		keyPrefix = []byte(n.Key)
	} else {
		idPrefix = []byte(n.ID)
	}
	all := n.nativeID() == "" // a prefix of every id
	// The path holds the id as the map's file name spells it
	// (mapstore.EncodeID: sess:one is sess%3Aone).
	id := mapstore.EncodeID(n.nativeID())
	whole := !jsonVerbatim(id)
	needle := []byte(id)
	return func(key, stored []byte) bool {
		switch {
		case all, whole:
			return true
		case keyPrefix != nil:
			if bytes.HasPrefix(key, keyPrefix) {
				return true
			}
		default:
			if _, keyID, ok := bytes.Cut(key, []byte("/")); ok && bytes.HasPrefix(keyID, idPrefix) {
				return true
			}
		}
		return bytes.Contains(stored, needle)
	}
}

// nativeID is the id typed, after its agent/ if it has one: what the name
// of a map file n names starts with.
func (n Named) nativeID() string {
	if _, after, ok := strings.Cut(n.Key, "/"); ok {
		return after
	}
	return n.ID
}

// mayBeFile reports whether the map file at rel (agent/…/id.json.gz), which
// no record names, may be of an entry n names: the maps agentmap writes
// are named by their session's id, which fromMap reads from within.
func (n Named) mayBeFile(rel string) bool {
	rel = filepath.ToSlash(rel)
	agent, _, _ := strings.Cut(rel, "/")
	id := fileID(path.Base(rel))
	return n.Matches(Entry{ID: id, Key: agent + "/" + id, Agent: agent})
}

// fileID is the session id a map file's name spells (mapstore.EncodeID:
// sess%3Aone.json.gz is sess:one), the name itself when it spells none.
func fileID(name string) string {
	id := strings.TrimSuffix(name, ".json.gz")
	if strings.IndexByte(id, '%') < 0 {
		return id // nearly every name: read with no copy made (a listing reads 100,000)
	}
	if d, err := mapstore.DecodeID(id); err == nil {
		return d
	}
	return id
}

// jsonVerbatim reports whether encoding/json writes s as it is between
// the quotes of a string.
func jsonVerbatim(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// recordEntry is the entry of a session's flush record, without opening
// its map: ok is false when no map of it was written. A record written
// before the summary kept the start leaves Start zero.
func recordEntry(s *state.Session) (Entry, bool) {
	f := s.Flush
	if f == nil || f.Path == "" {
		return Entry{}, false
	}
	// The map's own native id names its file; the session key's id
	// comes from the log's file name, which may differ (a copied log).
	id := fileID(filepath.Base(f.Path))
	e := Entry{Key: s.Key, Agent: s.Agent, ID: id, Path: f.Path, Repos: f.Sum.Repos,
		DurationMs: f.Sum.DurationMs, Calls: f.Sum.Calls, Requests: f.Sum.Requests, Errors: f.Sum.Errors,
		Tokens: f.Sum.Tokens, CostUSD: f.Sum.CostUSD, Unpriced: f.Sum.Unpriced, NoUsage: f.Sum.NoUsage, Outcome: f.Sum.Outcome, Flushed: time.UnixMilli(f.AtMs).UTC(),
		Live: s.Dirty(), Parent: s.Parent, Recorded: true}
	if e.NoUsage == 0 && e.Tokens == 0 && e.Requests > 0 {
		// A record written before the summary counted them: with no
		// token at all, every request recorded none (a session with
		// some usage is told apart once its map is written again).
		e.NoUsage = e.Requests
	}
	if t, err := time.Parse(time.RFC3339Nano, f.Sum.StartedAt); err == nil {
		e.Start = t
	}
	return e, true
}

// Recent lists the newest n sessions of the flush records whose id starts
// with prefix (and whose agent is agent, when given), newest first: what
// shell completion offers for a session id. It reads the records alone,
// holding no more than 2n entries at a time, and opens no map and lists
// no directory, so that it stays quick over 100,000 sessions; a map no
// record names (copied into the store) is not among them.
func Recent(db *state.DB, agent, prefix string, n int) ([]Entry, error) {
	var out []Entry
	err := db.LoadPasses(state.Passes{Sessions: func(s *state.Session) error {
		if e, ok := recordEntry(s); ok && matches(e, agent, prefix) {
			if out = append(out, e); len(out) >= 2*n {
				out = Newest(out, agent, prefix, n)
			}
		}
		return nil
	}})
	return Newest(out, agent, prefix, n), err
}

// Newest keeps, of es (reordered in place), the n newest entries whose id
// starts with prefix (of agent, when given), newest first.
func Newest(es []Entry, agent, prefix string, n int) []Entry {
	out := es[:0]
	for _, e := range es {
		if matches(e, agent, prefix) {
			out = append(out, e)
		}
	}
	SortEntries(out)
	return out[:min(len(out), max(n, 0))]
}

func matches(e Entry, agent, prefix string) bool {
	return strings.HasPrefix(e.ID, prefix) && (agent == "" || e.Agent == agent)
}

// SortEntries orders newest first, then by key.
func SortEntries(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool {
		if !es[i].Start.Equal(es[j].Start) {
			return es[i].Start.After(es[j].Start)
		}
		return es[i].Key < es[j].Key
	})
}

// fromMap fills an entry from its map file.
func fromMap(store *mapstore.Store, e *Entry) error {
	doc, err := mapfile.ReadFile(filepath.Join(store.Root, e.Path))
	if err != nil {
		return err
	}
	m := doc.Map
	if e.Agent == "" {
		e.Agent = strings.SplitN(filepath.ToSlash(e.Path), "/", 2)[0]
		e.ID = m.Session.NativeID()
		e.Key = e.Agent + "/" + e.ID
		e.Calls, e.Requests, e.Errors = m.Totals.Calls, m.Totals.Requests, m.Totals.Errors
		e.Tokens, e.CostUSD, e.Outcome = m.Totals.Tokens, m.Totals.CostUSD, m.Session.Outcome
		e.Unpriced = m.UnpricedModels("")
		e.NoUsage = m.RequestsWithoutUsage()
	}
	if t, ok := m.Start(); ok {
		e.Start = t
	}
	e.DurationMs = m.Session.DurationMs
	e.Repos = nil
	for _, r := range m.Repos {
		e.Repos = append(e.Repos, r.Name)
	}
	return nil
}
