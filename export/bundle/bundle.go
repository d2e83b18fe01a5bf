// Package bundle writes agentplay bundles: a tar.gz holding each map as
// its own deterministic .json.gz (the bytes the store holds) and, last, a
// manifest.json listing them, so `agentplay import` can take the maps one
// by one.
package bundle

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/agentmap/agentmap/export/mapfile"
)

// ManifestName is the manifest's entry name.
const ManifestName = "manifest.json"

// Manifest describes a bundle.
type Manifest struct {
	Format     string  `json:"format"`
	ExportedAt string  `json:"exportedAt"`
	Maps       []Entry `json:"maps"`
}

// Entry is one map of a bundle.
type Entry struct {
	SessionID   string `json:"sessionId"`
	Agent       string `json:"agent"`
	StartedAt   string `json:"startedAt,omitempty"`
	ContentHash string `json:"contentHash"`
	PathMode    string `json:"pathMode"`
	File        string `json:"file"`
}

// FormatID names the bundle layout in its manifest.
const FormatID = "agentmap-bundle/v1"

// Writer streams a bundle.
type Writer struct {
	zw       *gzip.Writer
	tw       *tar.Writer
	now      time.Time
	manifest Manifest
	names    map[string]bool
}

// NewWriter starts a bundle on w; now stamps the manifest.
func NewWriter(w io.Writer, now time.Time) *Writer {
	zw := gzip.NewWriter(w)
	return &Writer{zw: zw, tw: tar.NewWriter(zw), now: now.UTC(),
		manifest: Manifest{Format: FormatID, ExportedAt: now.UTC().Format(time.RFC3339), Maps: []Entry{}},
		names:    map[string]bool{}}
}

// Add writes one map as <agent>/<native id>.json.gz.
func (w *Writer) Add(d *mapfile.Doc) error {
	gz, err := d.Gzip()
	if err != nil {
		return err
	}
	agent := d.Map.Session.AgentTool
	if agent == "" {
		agent = "unknown"
	}
	name := path.Join(safeSegment(agent), d.Name)
	if w.names[name] {
		return fmt.Errorf("bundle: two maps named %s", name)
	}
	w.names[name] = true
	mod := w.now
	if start, ok := d.Map.Start(); ok {
		mod = start
	}
	if err := w.file(name, gz, mod); err != nil {
		return err
	}
	w.manifest.Maps = append(w.manifest.Maps, Entry{
		SessionID: d.Map.Session.ID, Agent: d.Map.Session.AgentTool, StartedAt: d.Map.Session.StartedAt,
		ContentHash: d.Map.ContentHash, PathMode: d.Map.Session.PathMode, File: name,
	})
	return nil
}

func (w *Writer) file(name string, data []byte, mod time.Time) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: mod, Typeflag: tar.TypeReg,
		Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if _, err := w.tw.Write(data); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// Close writes the manifest and ends the archive.
func (w *Writer) Close() error {
	b, err := json.MarshalIndent(w.manifest, "", "  ")
	if err != nil {
		return err
	}
	if err := w.file(ManifestName, append(b, '\n'), w.now); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return w.zw.Close()
}

// Count is the number of maps written.
func (w *Writer) Count() int { return len(w.manifest.Maps) }

func safeSegment(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '/' || c == '\\' || c == ':' || c < 32 || c == '.' && len(b) <= 2 {
			b[i] = '_'
		}
	}
	return string(b)
}
