//go:build !linux

package durable

// syncMany makes the data of a batch's temporary files durable: one fsync
// each.
func syncMany(dirs []*batchDir) map[*tempFile]error {
	out := map[*tempFile]error{}
	for _, d := range dirs {
		fsyncEach(d.tmps, out)
	}
	return out
}
