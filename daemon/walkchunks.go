package daemon

import "github.com/agentmap/agentmap/watchers"

// walkChunk is how many logs of a one-shot catch-up's walk are ingested at
// a time; a variable so that tests can cut a small walk into pieces.
var walkChunk = 4096

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
