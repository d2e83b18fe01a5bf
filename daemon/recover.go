package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
	"github.com/agentmap/agentmap/watchers"
)

// StateRepair is what `status` shows of a damaged state database found at
// start (state.Repair) and of damaged records met since.
type StateRepair struct {
	At time.Time `json:"at"`
	// Aside is where a database too damaged to read was moved: everything
	// was read again from the logs.
	Aside  string `json:"aside,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Records and Sources count damaged records dropped and the logs read
	// again from the start because of them.
	Records int `json:"records,omitempty"`
	Sources int `json:"sources,omitempty"`
	// By is the process that found the damage: "scan" or "daemon". It is
	// kept in the state database (state.SettingLastRepair), so that a
	// later status, of no daemon or of a daemon started since, still
	// tells it, with Earlier set, for repairShownFor.
	By      string `json:"by,omitempty"`
	Earlier bool   `json:"earlier,omitempty"`
}

// repairShownFor is how long status tells a repair an earlier process
// made (its line says when): long enough to be seen by whoever looks
// within the week, not a warning for good.
const repairShownFor = 7 * 24 * time.Hour

// keepRepair records d.repair in the state database for later status.
// Failing to is only logged: the repair itself is done.
func (d *Daemon) keepRepair() {
	if d.repair == nil || d.db == nil {
		return
	}
	r := *d.repair
	r.Earlier = false
	r.By = "daemon"
	if d.opt.Once {
		r.By = "scan"
	}
	raw, err := json.Marshal(r)
	if err == nil {
		err = d.db.PutSetting(state.SettingLastRepair, string(raw))
	}
	if err != nil {
		d.log.Warn("cannot record the repair for a later status", "component", "state", "err", err)
	}
}

// earlierRepair is the repair an earlier process recorded, if it is
// recent enough to show (nil otherwise, or when it cannot be read).
func earlierRepair(db *state.DB, now time.Time) *StateRepair {
	raw, err := db.Setting(state.SettingLastRepair)
	if err != nil || raw == "" {
		return nil
	}
	var r StateRepair
	if json.Unmarshal([]byte(raw), &r) != nil || r.At.IsZero() || now.Sub(r.At) > repairShownFor {
		return nil
	}
	r.Earlier = true
	return &r
}

// noteRepair records what state.Open repaired. A forgotten conversation of
// a SQLite database is only found again by polling the database anew, so
// every database forgets what it last read.
func (d *Daemon) noteRepair(r state.Repair) {
	if !r.Happened() {
		return
	}
	d.repair = &StateRepair{At: r.At, Aside: r.Aside, Reason: r.Reason, Records: r.Records, Sources: r.Sources}
	d.keepRepair()
	d.findUnrecorded()
	if r.Sources > 0 {
		for _, s := range d.srcs {
			if s.Form == watchers.FormSQLite {
				s.Digest = ""
			}
		}
	}
}

// findUnrecorded lists the maps in the store by session, after a repair
// that may have lost the records naming them (a database moved aside, a
// session record dropped). The map names are reversible (mapstore), so
// each file says whose it is. A session that is read again then replaces
// them as it would the map its record named: a different file of its own
// is removed when its new map is written, and all are when it no longer
// makes a map. A session never read again (its logs are gone) keeps its
// map. Only files named as maps under the store are looked at.
func (d *Daemon) findUnrecorded() {
	byKey, err := d.storedMaps()
	if err != nil {
		d.log.Warn("cannot list the maps after a repair", "component", "store", "err", err)
		return
	}
	d.unrecorded = byKey
}

// storedMaps lists the maps in the store by the key of their session (the
// map names are reversible: each file says whose it is). Only files named
// as maps under the store are looked at.
func (d *Daemon) storedMaps() (map[string][]string, error) {
	rels, err := d.store.List()
	if err != nil {
		return nil, err
	}
	byKey := map[string][]string{}
	for _, rel := range rels {
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 {
			continue
		}
		native, err := mapstore.DecodeID(strings.TrimSuffix(parts[3], ".json.gz"))
		if err != nil {
			continue
		}
		key := sessionKey(parts[0], native)
		byKey[key] = append(byKey[key], rel)
	}
	return byKey, nil
}

// previousMaps returns the maps in the store that a session's next flush
// replaces: the one its record names and any found after a repair.
func (d *Daemon) previousMaps(s *state.Session) []string {
	var out []string
	if s.Flush != nil && s.Flush.Path != "" {
		out = append(out, s.Flush.Path)
	}
	for _, rel := range d.unrecorded[s.Key] {
		if len(out) == 0 || rel != out[0] {
			out = append(out, rel)
		}
	}
	return out
}

// repairSession handles a damaged event batch met while building a map:
// the sources concerned are forgotten and their logs read again from the
// start, so that only that session pays. It reports whether it did.
func (d *Daemon) repairSession(err error) bool {
	var de *state.DamagedError
	if !errors.As(err, &de) {
		return false
	}
	var forget []*state.Source
	want := map[uint64]bool{}
	for _, id := range de.Sources {
		want[id] = true
	}
	for _, s := range d.srcs {
		if s.Session == de.Session && (len(want) == 0 || want[s.ID]) {
			forget = append(forget, s)
			delete(want, s.ID)
		}
	}
	for id := range want {
		forget = append(forget, &state.Source{ID: id, Session: de.Session}) // events of no known source
	}
	sort.Slice(forget, func(i, j int) bool { return forget[i].ID < forget[j].ID })
	d.commitGroup()
	if err := d.db.ForgetSources(forget); err != nil {
		d.log.Error("cannot drop damaged events", "component", "state", "session", de.Session, "err", err)
		return false
	}
	d.log.Error("damaged events in the state database; reading the session's logs again", "component", "state",
		"session", de.Session, "sources", len(forget))
	if d.repair == nil || d.repair.Earlier {
		d.repair = &StateRepair{}
	}
	d.repair.At = d.opt.Clock.Now()
	d.repair.Records++
	d.repair.Sources += len(forget)
	d.keepRepair()
	var again []watchers.FileStat
	for _, s := range forget {
		if d.srcs[s.ID] != s {
			continue
		}
		delete(d.srcs, s.ID)
		delete(d.parsers, s.ID)
		if d.byPath[s.Path] == s {
			delete(d.byPath, s.Path)
			d.forgetDB(s.Path) // read again below, tried again if it fails again
		}
		f := watchers.FileStat{Path: s.Path, Agent: s.Agent, Form: s.Form}
		if s.Form == formConversation {
			// A conversation comes back when its database is polled anew.
			f.Path, _, _ = strings.Cut(s.Path, "#")
			db := d.byPath[f.Path]
			if db == nil {
				continue
			}
			db.Digest, f.Form = "", db.Form
		}
		again = append(again, f)
	}
	for _, f := range again {
		d.revisit(f.Path, f.Agent, f.Form)
	}
	d.commitGroup()
	return true
}

// revisit reads one path again as the watcher would report it.
func (d *Daemon) revisit(path, agent, form string) {
	fi, err := os.Stat(path)
	if err != nil {
		return // gone: what it gave is lost with its events
	}
	f := watchers.FileStat{Path: path, Agent: agent, Form: form, Size: fi.Size(), ModTime: fi.ModTime(), ID: watchers.StatID(fi)}
	if wi, err := os.Stat(path + "-wal"); err == nil {
		f.Wal = &watchers.WalStat{Size: wi.Size(), ModTime: wi.ModTime()}
	}
	d.visit(context.Background(), f)
}

// mapMissing reports whether a session's last map was written and is no
// longer in the store as written (deleted by hand, or another size):
// `scan` and `flush --all` write it again rather than calling it up to
// date.
func (d *Daemon) mapMissing(s *state.Session) bool {
	if s.Flush == nil || s.Flush.Path == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(d.store.Root, s.Flush.Path))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	// Not the size it was written at: cut short, emptied or written
	// over (by a disk, a tool, a hand), and as good as missing.
	return err == nil && s.Flush.Size > 0 && fi.Size() != s.Flush.Size
}
