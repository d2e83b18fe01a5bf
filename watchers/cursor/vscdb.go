package cursor

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmap/agentmap/internal/regular"
)

// ReadVSCDB reads every conversation of a Cursor state.vscdb, read-only,
// whatever its era:
//
//   - cursorDiskKV composerData:<id> with fullConversationHeadersOnly and
//     bubbleId:<id>:<bubble> rows (2025+, _v 3 … 16): bubbles in header
//     order; bubbles missing from the headers are stale and ignored;
//   - cursorDiskKV composerData:<id> holding its bubbles inline
//     (conversation[], early 2025);
//   - a workspace ItemTable composer.composerData whose allComposers carry
//     inline conversations (2024); entries that are headers only (type
//     "head") hold no content here and are skipped: their composer is in
//     the global database;
//   - the legacy chat panel (ItemTable workbench.panel.aichat…chatdata),
//     one conversation per tab.
//
// Composers with no user or assistant bubble (drafts) are left out. A
// workspace database's folder (workspace.json beside it) is the cwd of its
// conversations; so is, for a composer of the global database, the folder
// of the workspace whose index lists it (see composerFolders). A locked or half-written database returns an error
// wrapping ErrBusy; a row that does not decode is skipped.
func ReadVSCDB(ctx context.Context, path string) ([]Conversation, error) {
	return ReadVSCDBSince(ctx, path, 0)
}

// ReadVSCDBSince is ReadVSCDB limited to the conversations updated after
// afterMs (Unix ms): a poller passes the UpdatedMs it has already seen, so
// that only the bubbles of changed composers are read. A composer's
// update time is its lastUpdatedAt, else its createdAt. Cursor bumps
// lastUpdatedAt on mere navigation, which costs a re-read, not a miss; it
// has been seen to rewrite a bubble without bumping it, which a poller
// catches with a full ReadVSCDB now and then.
func ReadVSCDBSince(ctx context.Context, path string, afterMs int64) ([]Conversation, error) {
	db, err := openRO(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ts, err := tables(ctx, db)
	if err != nil {
		return nil, err
	}
	cwd := workspaceFolder(path)
	folders := composerFolders(ctx, path)
	var out []Conversation
	seen := map[string]bool{}
	add := func(c Conversation) {
		if c.NativeID == "" || seen[c.NativeID] || c.UpdatedMs <= afterMs && afterMs > 0 {
			return
		}
		seen[c.NativeID] = true
		out = append(out, c)
	}

	if ts["cursorDiskKV"] {
		// Keys first, then one value at a time: a global database holds
		// thousands of composers, some of many MB.
		keys, err := scanKeys(ctx, db, "cursorDiskKV", "composerData:")
		if err != nil {
			return nil, err
		}
		for _, key := range keys {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			raw, err := getKey(ctx, db, "cursorDiskKV", key)
			if err != nil {
				return nil, err
			}
			if raw == nil {
				continue
			}
			c, err := decodeComposer(raw)
			if err != nil {
				continue
			}
			if c.ComposerID == "" {
				c.ComposerID = strings.TrimPrefix(key, "composerData:")
			}
			if upd := epochMs(c.LastUpdatedAt); afterMs > 0 && max(upd, epochMs(c.CreatedAt)) <= afterMs {
				continue
			}
			bubbles, err := composerBubbles(ctx, db, c)
			if err != nil {
				return nil, err
			}
			wd := cwd
			if f := folders[c.ComposerID]; f != "" {
				wd = f
			}
			add(composerConvo(c, bubbles, wd).build())
		}
	}
	if ts["ItemTable"] {
		raw, err := getKey(ctx, db, "ItemTable", "composer.composerData")
		if err != nil {
			return nil, err
		}
		for _, cv := range workspaceComposers(raw, cwd) {
			add(cv.build())
		}
		raw, err = getKey(ctx, db, "ItemTable", "workbench.panel.aichat.view.aichat.chatdata")
		if err != nil {
			return nil, err
		}
		for _, cv := range chatConvos(raw, cwd) {
			add(cv.build())
		}
	}
	return out, nil
}

// IsVSCDB reports whether path is a Cursor (VS Code style) state database:
// an SQLite file with an ItemTable.
func IsVSCDB(path string) bool {
	return hasTables(path, "ItemTable")
}

// composerBubbles returns the bubbles of a composer in canonical order:
// inline ones, or the bubbleId rows named by the headers.
func composerBubbles(ctx context.Context, db *sql.DB, c *composer) ([]*bubble, error) {
	if len(c.Conversation) > 0 {
		return inlineBubbles(c), nil
	}
	if len(c.Headers) == 0 {
		return nil, nil
	}
	// One lookup per header keeps one bubble in memory at a time (a
	// composer can hold thousands, some of many MB).
	var ferr error
	bubbles := headerBubbles(c, func(id string) []byte {
		if ferr != nil {
			return nil
		}
		v, err := getKey(ctx, db, "cursorDiskKV", "bubbleId:"+c.ComposerID+":"+id)
		ferr = err
		return v
	})
	if ferr != nil {
		return nil, ferr
	}
	return bubbles, nil
}

// headerBubbles orders bubbles by the composer's headers; get returns the
// raw value of a bubble id, or nil.
func headerBubbles(c *composer, get func(id string) []byte) []*bubble {
	out := make([]*bubble, 0, len(c.Headers))
	for _, h := range c.Headers {
		raw := get(h.BubbleID)
		if raw == nil {
			continue
		}
		b, err := decodeBubble(raw)
		if err != nil {
			continue
		}
		if b.BubbleID == "" {
			b.BubbleID = h.BubbleID
		}
		if b.Type == 0 {
			b.Type = h.Type
		}
		out = append(out, b)
	}
	return out
}

func inlineBubbles(c *composer) []*bubble {
	out := make([]*bubble, 0, len(c.Conversation))
	for _, raw := range c.Conversation {
		if b, err := decodeBubble(raw); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// composerConvo gathers what a composer says about its conversation.
func composerConvo(c *composer, bubbles []*bubble, cwd string) convo {
	cv := convo{id: c.ComposerID, createdMs: epochMs(c.CreatedAt),
		updatedMs: epochMs(c.LastUpdatedAt), cwd: cwd, bubbles: bubbles, status: c.Status}
	if c.ModelConfig != nil {
		cv.model = servedModel(c.ModelConfig.ModelName)
	}
	if c.SubagentInfo != nil {
		cv.parent = c.SubagentInfo.ParentComposerID
	}
	return cv
}

// workspaceComposers reads a workspace composer.composerData value.
func workspaceComposers(raw []byte, cwd string) []convo {
	if raw == nil {
		return nil
	}
	var d struct {
		All []json.RawMessage `json:"allComposers"`
	}
	if decodeRow(raw, &d) != nil {
		return nil
	}
	var out []convo
	for _, r := range d.All {
		c, err := decodeComposer(r)
		if err != nil || c.ComposerID == "" || len(c.Conversation) == 0 {
			continue
		}
		out = append(out, composerConvo(c, inlineBubbles(c), cwd))
	}
	return out
}

// chatConvos reads the legacy chat panel value: one conversation per tab.
// Tabs carry one time, the last send; it is both start and update time.
func chatConvos(raw []byte, cwd string) []convo {
	if raw == nil {
		return nil
	}
	tabs, err := decodeChatData(raw)
	if err != nil {
		return nil
	}
	var out []convo
	for _, t := range tabs {
		if t.TabID == "" {
			continue
		}
		ms := epochMs(t.LastSendTime)
		out = append(out, convo{id: t.TabID, createdMs: ms, updatedMs: ms, cwd: cwd, bubbles: tabBubbles(t)})
	}
	return out
}

// workspaceFolder reads workspace.json beside a workspace database
// ({"folder":"file:///…"}); "" for the global database or when absent.
func workspaceFolder(dbPath string) string {
	raw, err := regular.ReadFile(filepath.Join(filepath.Dir(dbPath), "workspace.json"))
	if err != nil || len(raw) > 1<<20 {
		return ""
	}
	var w struct {
		Folder string `json:"folder"`
	}
	if json.Unmarshal(raw, &w) != nil || !strings.HasPrefix(w.Folder, "file:") {
		return ""
	}
	return uriPath(w.Folder)
}

// maxWorkspaces bounds how many workspace databases composerFolders opens.
const maxWorkspaces = 2000

// composerFolders maps the composers of a global database
// (…/User/globalStorage/state.vscdb) to their workspace folders: each
// …/User/workspaceStorage/<hash>/ has a workspace.json naming the folder
// and a state.vscdb whose composer.composerData lists its composers. This
// is the only exact cwd of a global composer. A workspace that cannot be
// read now (busy, broken) is skipped; nil for any other database.
func composerFolders(ctx context.Context, globalPath string) map[string]string {
	dir := filepath.Dir(globalPath)
	if filepath.Base(dir) != "globalStorage" {
		return nil
	}
	wsRoot := filepath.Join(filepath.Dir(dir), "workspaceStorage")
	ents, err := os.ReadDir(wsRoot)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for i, e := range ents {
		if i >= maxWorkspaces || ctx.Err() != nil {
			break
		}
		db := filepath.Join(wsRoot, e.Name(), "state.vscdb")
		folder := workspaceFolder(db)
		if folder == "" {
			continue
		}
		for _, id := range indexedComposers(ctx, db) {
			if _, ok := out[id]; !ok {
				out[id] = folder
			}
		}
	}
	return out
}

// indexedComposers lists the composer ids of a workspace database's
// composer.composerData.
func indexedComposers(ctx context.Context, path string) []string {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := openRO(ctx, path)
	if err != nil {
		return nil
	}
	defer db.Close()
	raw, err := getKey(ctx, db, "ItemTable", "composer.composerData")
	if err != nil || raw == nil {
		return nil
	}
	var d struct {
		All []struct {
			ComposerID string `json:"composerId"`
		} `json:"allComposers"`
	}
	if decodeRow(raw, &d) != nil {
		return nil
	}
	ids := make([]string, 0, len(d.All))
	for _, c := range d.All {
		if c.ComposerID != "" {
			ids = append(ids, c.ComposerID)
		}
	}
	return ids
}
