package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/watchers"
)

// The JSON storage of OpenCode before its SQLite store (0.x up to 1.1),
// under <data dir>/storage/:
//
//	session/<project id>/<session id>.json   the session (id, parentID, directory, version, time)
//	message/<session id>/<message id>.json   a message (the data column of the store, with id)
//	part/<message id>/<part id>.json         a part (likewise)
//
// A root session file is the unit: it is read with its messages and parts
// and with its child sessions (the session files of the same project that
// name it as parentID).

// IsStorageSession reports whether path is a session file of the JSON
// storage: storage/session/<project>/<id>.json.
func IsStorageSession(path string) bool {
	dir := filepath.Dir(path)
	return strings.HasSuffix(path, ".json") && filepath.Base(filepath.Dir(dir)) == "session" &&
		filepath.Base(filepath.Dir(filepath.Dir(dir))) == "storage"
}

// ReadStorageSession reads the session of a storage session file with its
// children, as one conversation; a child session's file yields none (its
// root's map holds it as a lane).
func ReadStorageSession(ctx context.Context, path string) ([]watchers.Conversation, error) {
	root, err := readSessionFile(path)
	if err != nil {
		return nil, err
	}
	storage := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	siblings, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.json"))
	sessions := []*sessionRec{root}
	byID := map[string]*sessionRec{root.ID: root}
	for _, s := range siblings {
		if s == path || ctx.Err() != nil {
			continue
		}
		if rec, err := readSessionFile(s); err == nil && byID[rec.ID] == nil {
			sessions = append(sessions, rec)
			byID[rec.ID] = rec
		}
	}
	if root.Parent != "" && byID[root.Parent] != nil {
		return nil, nil
	}
	msgs := map[string][]messageRec{}
	for _, s := range sessions {
		if !descends(byID, s, root.ID) {
			continue
		}
		list, err := readStoredMessages(storage, s.ID)
		if err != nil {
			return nil, err
		}
		msgs[s.ID] = list
	}
	convs := convert(sessions, msgs)
	for _, c := range convs {
		if c.NativeID == root.ID {
			return []watchers.Conversation{c}, nil
		}
	}
	return nil, nil
}

// descends reports whether s is root or below it.
func descends(byID map[string]*sessionRec, s *sessionRec, root string) bool {
	for i := 0; s != nil && i < 64; i++ {
		if s.ID == root {
			return true
		}
		s = byID[s.Parent]
	}
	return false
}

func readSessionFile(path string) (*sessionRec, error) {
	b, err := regular.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("opencode: read session: %w", err)
	}
	var s sessionRec
	if json.Unmarshal(b, &s) != nil || s.ID == "" {
		return nil, errors.New("opencode: not an OpenCode session file")
	}
	return &s, nil
}

// readStoredMessages reads the messages of a session with their parts, in id
// order (ids ascend with time).
func readStoredMessages(storage, session string) ([]messageRec, error) {
	files, err := jsonFiles(filepath.Join(storage, "message", session))
	if err != nil {
		return nil, err
	}
	var out []messageRec
	for _, f := range files {
		b, err := regular.ReadFile(f)
		if err != nil {
			continue // removed meanwhile
		}
		var head struct {
			ID   string `json:"id"`
			Time struct {
				Created int64 `json:"created"`
			} `json:"time"`
		}
		if json.Unmarshal(b, &head) != nil || head.ID == "" {
			continue
		}
		m := messageRec{ID: head.ID, Created: head.Time.Created, Data: b}
		parts, err := jsonFiles(filepath.Join(storage, "part", head.ID))
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			if pb, err := regular.ReadFile(p); err == nil {
				m.Parts = append(m.Parts, pb)
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Created != out[j].Created {
			return out[i].Created < out[j].Created
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// jsonFiles lists the .json files of a directory, sorted; none when the
// directory does not exist.
func jsonFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opencode: read storage: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadStore reads either kind of store: the SQLite file, or a session
// file of the JSON storage.
func ReadStore(ctx context.Context, path string) ([]watchers.Conversation, error) {
	if IsStorageSession(path) {
		return ReadStorageSession(ctx, path)
	}
	return ReadDB(ctx, path)
}

// StorageSessionID is the id of the session a storage session file holds.
func StorageSessionID(path string) (string, error) {
	s, err := readSessionFile(path)
	if err != nil {
		return "", err
	}
	return s.ID, nil
}

// IsStore reports whether path is either kind of store.
func IsStore(path string) bool {
	if IsStorageSession(path) {
		_, err := readSessionFile(path)
		return err == nil
	}
	return IsDB(path)
}
