package export

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentmap/agentmap/export/agentscope"
	"github.com/agentmap/agentmap/export/mapfile"
	"github.com/agentmap/agentmap/state/durable"

	"github.com/agentmap/agentmap/internal/regular"
)

// Scheduled exports are named agentmap-<stamp><ext>, the stamp in UTC to
// the second, so names sort by time and each format's files are found by
// their suffix.
const (
	filePrefix  = "agentmap-"
	stampLayout = "20060102T150405Z"
)

// FileName is the name of a scheduled export of format f made at stamp.
func FileName(f Format, stamp time.Time) string {
	return filePrefix + stamp.UTC().Format(stampLayout) + f.Ext()
}

// Batch is one scheduled export: every format of a schedule written into
// one directory under one stamp.
type Batch struct {
	Dir     string
	Formats []Format
	Options Options
	// Written, if set, is told of each file as soon as it is in place,
	// before the next one is: what an attempt cut short left is then
	// known to be its own.
	Written func(path string)
	Stamp   time.Time
}

// BatchResult says what a batch wrote.
type BatchResult struct {
	Files    []string
	Sessions int
	NextSeq  uint64 // AttemptDB: the FirstSeq of the next batch
	// Exported holds, for each map file in the batch, the SHA-256 (hex)
	// of the file as it was read and exported (the hash a flush records
	// for the file it writes): newer than the one selected when the map
	// was written again since.
	Exported map[string]string
}

// Write exports files in every format of the batch. Each map is read once
// and added to every format, so the formats of a batch hold the same
// content of each session, and Exported says which. It is all or
// nothing: when one format fails, the files of the others are removed and
// the error returned, so the daemon can retry the same batch (same maps,
// same FirstSeq) without duplicating or skipping a session. A map that
// cannot be read is passed to bad and left out of every format; one a
// format's writer refuses is passed to bad and left out of that format
// only (it is in Exported when another format holds it). A batch that
// selects no map writes nothing and is not an error. Pruning older
// exports is PruneOwned's, of the files their writer recorded.
func (b Batch) Write(sel Selection, files []string, bad func(string, error)) (BatchResult, error) {
	type output struct {
		target string
		out    *durable.File
		s      *stream
	}
	outs := make([]output, 0, len(b.Formats))
	defer func() {
		for _, o := range outs {
			o.out.Abort() // a no-op once committed
		}
	}()
	for _, f := range b.Formats {
		target := filepath.Join(b.Dir, FileName(f, b.Stamp))
		if _, err := os.Stat(target); err == nil {
			return BatchResult{}, fmt.Errorf("export batch: %s already exists", target)
		}
		out, err := durable.Create(target, 0o600)
		if err != nil {
			return BatchResult{}, fmt.Errorf("export batch %s: %w", f, err)
		}
		outs = append(outs, output{target: target, out: out})
		if outs[len(outs)-1].s, err = newStream(out, f, b.Options, Gzipped(f, target)); err != nil {
			return BatchResult{}, fmt.Errorf("export batch %s: %w", f, err)
		}
	}
	res := BatchResult{NextSeq: b.Options.FirstSeq, Exported: map[string]string{}}
	selected := 0 // maps read and kept by sel, whether a format took them or not
	for _, file := range files {
		d, sum, err := readHashed(file)
		if err != nil {
			if bad == nil {
				return BatchResult{}, fmt.Errorf("%s: %w", file, err)
			}
			bad(file, err)
			continue
		}
		if !sel.keep(d, file) {
			continue
		}
		selected++
		held := false
		for _, o := range outs {
			n := o.s.x.res.Sessions
			if err := o.s.x.Add(d); err != nil {
				if bad == nil {
					return BatchResult{}, fmt.Errorf("%s: %w", file, err)
				}
				bad(file, err)
				continue
			}
			held = held || o.s.x.res.Sessions > n // not a second map of a session already in
		}
		if held {
			res.Exported[file] = sum
		}
	}
	if selected == 0 {
		return BatchResult{NextSeq: b.Options.FirstSeq}, nil // nothing selected: the deferred aborts drop the files
	}
	for i, o := range outs {
		empty := o.s.x.res.Sessions == 0
		r, err := o.s.close()
		if empty && (err == nil || errors.Is(err, agentscope.ErrNoRuns)) {
			continue // its writer refused every map: no file of that format this time
		}
		// A write error (a full disk, a file size limit) is sticky in
		// every writer: it is here even when it made the writer refuse
		// every map, and fails the batch rather than drop a format.
		if err == nil {
			err = o.out.Commit()
			if err != nil {
				os.Remove(o.target) // a failed directory sync comes after the rename; it did not exist before
			} else if b.Written != nil {
				b.Written(o.target)
			}
		}
		if err != nil {
			b.remove(res.Files)
			return BatchResult{}, fmt.Errorf("export batch %s: %w", b.Formats[i], err)
		}
		res.Files = append(res.Files, o.target)
		res.Sessions = max(res.Sessions, r.Sessions)
		if b.Formats[i] == AttemptDB {
			res.NextSeq = r.NextSeq
		}
	}
	return res, nil
}

// readHashed reads a map file and the SHA-256 (hex) of its bytes, as a
// flush records it for the file it wrote.
func readHashed(file string) (*mapfile.Doc, string, error) {
	f, err := regular.Open(file)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	h := sha256.New()
	r := io.TeeReader(f, h)
	d, err := mapfile.Read(r)
	if err != nil {
		return nil, "", err
	}
	if _, err := io.Copy(io.Discard, r); err != nil { // bytes after the map, if any, are the file's too
		return nil, "", fmt.Errorf("read map: %w", err)
	}
	return d, hex.EncodeToString(h.Sum(nil)), nil
}

func (b Batch) remove(files []string) {
	for _, f := range files {
		os.Remove(f)
	}
}

// OwnedFile is a scheduled export as its writer found it once written:
// pruning deletes only files that are still that, so that a file of the
// same name someone else put there (another data directory exporting into
// the same directory, a copy kept by hand) is never deleted.
type OwnedFile struct {
	Dir   string `json:"dir"` // absolute: a file of the name in another directory is not it
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	ModNs int64  `json:"modNs"`
}

// Own describes the files a batch wrote, to be recorded as its writer's. A
// file it cannot look at is left out: never pruned.
func Own(files []string) []OwnedFile {
	var out []OwnedFile
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, OwnedFile{Dir: absDir(filepath.Dir(f)), Name: filepath.Base(f), Size: fi.Size(), ModNs: fi.ModTime().UnixNano()})
		}
	}
	return out
}

// PruneOwned removes, of the owned exports in dir, all but the newest keep
// of each of formats (keep > 0), and returns what is still owned. A file
// gone, or another file now (its size or time changed, a link or a
// directory in its place), is left alone and owned no more; files of other
// formats stay owned, and any file not owned is never looked at.
func PruneOwned(dir string, formats []Format, keep int, owned []OwnedFile) ([]OwnedFile, error) {
	var still []OwnedFile
	byFormat := map[Format][]OwnedFile{}
	dir = absDir(dir)
	last := map[string]int{} // a name recorded twice (a retried record) counts once: its last record
	for i, o := range owned {
		last[o.Dir+"\x00"+o.Name] = i
	}
	for i, o := range owned {
		if last[o.Dir+"\x00"+o.Name] != i {
			continue
		}
		if o.Dir != dir {
			// Written into another directory (export.dir changed): a
			// file of its name here is not it, and it is not looked at.
			still = append(still, o)
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, o.Name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != o.Size || fi.ModTime().UnixNano() != o.ModNs {
			continue
		}
		f, ok := formatOf(o.Name, formats)
		if !ok {
			still = append(still, o)
			continue
		}
		byFormat[f] = append(byFormat[f], o)
	}
	var firstErr error
	for _, f := range formats {
		files := byFormat[f]
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name }) // stamps sort by time
		for len(files) > keep {
			if err := os.Remove(filepath.Join(dir, files[0].Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				if firstErr == nil {
					firstErr = fmt.Errorf("prune exports in %s: %w", dir, err)
				}
				still = append(still, files[0]) // still there: tried again next time
			}
			files = files[1:]
		}
		still = append(still, files...)
	}
	sort.Slice(still, func(i, j int) bool { return still[i].Name < still[j].Name })
	return still, firstErr
}

// RemoveOwned removes the owned files in dir that are still as they were
// written; any other file is left alone.
func RemoveOwned(dir string, owned []OwnedFile) error {
	dir = absDir(dir)
	for _, o := range owned {
		p := filepath.Join(dir, o.Name)
		fi, err := os.Lstat(p)
		if o.Dir != dir || err != nil || !fi.Mode().IsRegular() || fi.Size() != o.Size || fi.ModTime().UnixNano() != o.ModNs {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// absDir is dir made absolute, as owned files record it.
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// formatOf is the format of a scheduled export's name, of those given.
func formatOf(name string, formats []Format) (Format, bool) {
	rest, ok := strings.CutPrefix(name, filePrefix)
	if !ok || len(rest) < len(stampLayout) {
		return "", false
	}
	if _, err := time.Parse(stampLayout, rest[:len(stampLayout)]); err != nil {
		return "", false
	}
	for _, f := range formats {
		if rest[len(stampLayout):] == f.Ext() {
			return f, true
		}
	}
	return "", false
}
