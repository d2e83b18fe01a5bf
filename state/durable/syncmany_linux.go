package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncMany makes the data of several open files durable. On Linux one
// syncfs per filesystem does it for all of them; a batch of one is
// fsynced, as syncfs would also wait for every other writer's data.
func syncMany(fs []*os.File) map[*os.File]error {
	if len(fs) < 2 {
		return fsyncEach(fs)
	}
	out := map[*os.File]error{}
	byDev := map[uint64][]*os.File{}
	for _, f := range fs {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			out[f] = err
			continue
		}
		byDev[uint64(st.Dev)] = append(byDev[uint64(st.Dev)], f)
	}
	for _, group := range byDev {
		if err := unix.Syncfs(int(group[0].Fd())); err != nil {
			// A filesystem without syncfs support: fall back per file.
			for f, e := range fsyncEach(group) {
				out[f] = e
			}
		}
	}
	return out
}
