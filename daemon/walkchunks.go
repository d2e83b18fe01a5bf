package daemon

import (
	"context"

	"github.com/agentmap/agentmap/watchers"
)

// walkChunk is how many logs of a one-shot catch-up's walk are ingested at
// a time; a variable so that tests can cut a small walk into pieces.
var walkChunk = 4096

// walkBeforeLoad makes a catch-up walk before the load even when no
// record needs the walk; for tests, which compare the two.
var walkBeforeLoad = false

// chunkWalk copies the walk into pieces of walkChunk logs, leaving out those
// skip reports (nil: none). once ingests the pieces one after the other and
// lets go of each as it goes: a single slice held the whole walk (a slot of
// 112 bytes a log, and the log's path, which d.sizes shares) until the last
// log was read, while the sessions already written piled up beside it. The
// copy is made during the load, when the walk is most of the heap.
func chunkWalk(walked []watchers.FileStat, skip func(i int) bool) [][]watchers.FileStat {
	var chunks [][]watchers.FileStat
	var cur []watchers.FileStat
	for i, f := range walked {
		if skip != nil && skip(i) {
			continue
		}
		if cur == nil {
			cur = make([]watchers.FileStat, 0, min(walkChunk, len(walked)-i))
		}
		cur = append(cur, f)
		if len(cur) == walkChunk {
			chunks, cur = append(chunks, cur), nil
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// ingestWalked ingests the walk made before the load, piece by piece. The
// last piece ends the walk: the sweep then looks at every record.
func (d *Daemon) ingestWalked(ctx context.Context) {
	chunks := d.walked
	d.walked = nil
	for _, files := range chunks {
		for _, f := range files {
			if s := d.byPath[f.Path]; s != nil && s.Form == watchers.FormLines && !s.Missing {
				d.progress.total += max(0, f.Size-s.Offset)
			} else {
				d.progress.total += f.Size
			}
		}
	}
	if len(chunks) == 0 {
		d.ingest(ctx, watchers.Update{Full: true})
	}
	for i, files := range chunks {
		chunks[i] = nil // let go of once read
		d.ingest(ctx, watchers.Update{Files: files, Full: i == len(chunks)-1})
		if ctx.Err() != nil {
			break
		}
	}
}

// ingestAsWalked is the catch-up of a state database with no records: no
// walk was needed for the load, so the logs are ingested in pieces as a
// walk meets them, in path order as a watcher's update is (a session's log
// before its subagents'), and none is kept once read: a walk held whole
// took some 200 bytes a log, the bulk of what a first scan of 100,000
// sessions grew by. The walk that sizes the catch-up for the progress
// costs stats, a few percent of it.
func (d *Daemon) ingestAsWalked(ctx context.Context) {
	piece := make([]watchers.FileStat, 0, walkChunk)
	ingest := func(full bool) {
		d.ingest(ctx, watchers.Update{Files: piece, Full: full})
		piece = piece[:0] // ingest keeps nothing of its list
	}
	watchers.WalkInPathOrder(d.roots, func(_ int, bytes int64) { d.progress.total = bytes }, func(f watchers.FileStat) bool {
		if piece = append(piece, f); len(piece) == walkChunk {
			ingest(false)
		}
		return ctx.Err() == nil
	})
	if ctx.Err() == nil {
		ingest(true)
	}
}
