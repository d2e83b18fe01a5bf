package mapfile

import (
	"bytes"
	"compress/gzip"
	"fmt"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
)

// Rerender returns the map with its file paths in another path mode. The
// map must be in relative mode: dirs_only and hashed are one-way, so only
// the relative form can be rendered again. The result is what the builder
// writes for the same events in that mode, because files[].path is the only
// place a repo-relative path appears and the renderer is the builder's own.
// A relative target, or the mode the map is already in, returns d
// unchanged.
func Rerender(d *Doc, mode redact.Mode, key []byte) (*Doc, error) {
	if mode == "" || mode == redact.ModeRelative {
		return d, nil
	}
	r := redact.NewRenderer(mode, key)
	if d.Map.Session.PathMode == string(r.Mode()) {
		// Already in that mode (for hashed: with the key it was written
		// with, which a map cannot tell).
		return d, nil
	}
	if d.Map.Session.PathMode != string(redact.ModeRelative) {
		return nil, fmt.Errorf("re-render %s: map is in %s mode; only relative maps can be re-rendered", d.Name, d.Map.Session.PathMode)
	}
	tree := cloneTree(d.tree)
	if files, ok := tree["files"].([]any); ok {
		for _, f := range files {
			if o, ok := f.(map[string]any); ok {
				if p, ok := o["path"].(string); ok {
					o["path"] = r.Path(p)
				}
			}
		}
	}
	session, _ := tree["session"].(map[string]any)
	if session == nil {
		return nil, fmt.Errorf("re-render %s: %w: no session", d.Name, ErrNotMap)
	}
	session["pathMode"] = string(r.Mode())
	hash, err := builder.ContentHash(tree)
	if err != nil {
		return nil, fmt.Errorf("re-render %s: %w", d.Name, err)
	}
	tree["contentHash"] = hash
	out, err := fromTree(tree)
	if err != nil {
		return nil, fmt.Errorf("re-render %s: %w", d.Name, err)
	}
	out.Name = d.Name
	return out, nil
}

// cloneTree copies the parts Rerender changes: the top level, session and
// files (events and the rest are shared, read-only).
func cloneTree(t map[string]any) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = v
	}
	if s, ok := t["session"].(map[string]any); ok {
		c := make(map[string]any, len(s))
		for k, v := range s {
			c[k] = v
		}
		out["session"] = c
	}
	if files, ok := t["files"].([]any); ok {
		c := make([]any, len(files))
		for i, f := range files {
			if o, ok := f.(map[string]any); ok {
				fo := make(map[string]any, len(o))
				for k, v := range o {
					fo[k] = v
				}
				c[i] = fo
			} else {
				c[i] = f
			}
		}
		out["files"] = c
	}
	return out
}

// gzipLevel matches the builder's, so a map from the store gzips back to
// the same bytes.
const gzipLevel = 6

// Gzip is the deterministic gzip of the canonical JSON (no name, no time).
func (d *Doc) Gzip() ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzipLevel)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(d.Canonical); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", d.Name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", d.Name, err)
	}
	return buf.Bytes(), nil
}

// FromMap wraps a map built in process.
func FromMap(m *builder.Map) (*Doc, error) {
	canon, err := m.Canonical()
	if err != nil {
		return nil, err
	}
	d, err := Parse(canon)
	if err != nil {
		return nil, err
	}
	return d, nil
}
