package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
	// Keep is how many exports of each format stay in Dir; 0 keeps all.
	Keep    int
	Options Options
	Stamp   time.Time
}

// BatchResult says what a batch wrote.
type BatchResult struct {
	Files    []string
	Sessions int
	NextSeq  uint64 // AttemptDB: the FirstSeq of the next batch
}

// Write exports files in every format of the batch. It is all or nothing:
// when one format fails, the files of the others are removed and the error
// returned, so the daemon can retry the same batch (same maps, same
// FirstSeq) without duplicating or skipping a session. A batch that
// selects no map writes nothing and is not an error. Older exports beyond
// Keep are removed after a batch succeeds.
func (b Batch) Write(sel Selection, files []string, bad func(string, error)) (BatchResult, error) {
	res := BatchResult{NextSeq: b.Options.FirstSeq}
	for _, f := range b.Formats {
		target := filepath.Join(b.Dir, FileName(f, b.Stamp))
		if _, err := os.Stat(target); err == nil {
			b.remove(res.Files)
			return BatchResult{}, fmt.Errorf("export batch: %s already exists", target)
		}
		r, err := WriteFile(target, f, b.Options, sel, files, bad)
		if errors.Is(err, ErrEmpty) {
			b.remove(res.Files)
			return BatchResult{NextSeq: b.Options.FirstSeq}, nil
		}
		if err != nil {
			b.remove(res.Files)
			return BatchResult{}, fmt.Errorf("export batch %s: %w", f, err)
		}
		res.Files = append(res.Files, target)
		res.Sessions = r.Sessions
		if f == AttemptDB {
			res.NextSeq = r.NextSeq
		}
	}
	if b.Keep > 0 {
		for _, f := range b.Formats {
			if err := Prune(b.Dir, f, b.Keep); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

func (b Batch) remove(files []string) {
	for _, f := range files {
		os.Remove(f)
	}
}

// Prune removes all but the newest keep scheduled exports of format f in
// dir. Files that are not scheduled exports are left alone.
func Prune(dir string, f Format, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("prune exports in %s: %w", dir, err)
	}
	var stamps []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), filePrefix)
		if !ok || len(rest) < len(stampLayout) || rest[len(stampLayout):] != f.Ext() {
			continue
		}
		if _, err := time.Parse(stampLayout, rest[:len(stampLayout)]); err == nil {
			stamps = append(stamps, e.Name())
		}
	}
	sort.Strings(stamps)
	for len(stamps) > keep {
		if err := os.Remove(filepath.Join(dir, stamps[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("prune exports in %s: %w", dir, err)
		}
		stamps = stamps[1:]
	}
	return nil
}
