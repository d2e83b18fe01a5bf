package durable

import (
	"golang.org/x/sys/unix"
)

// syncMany makes the data of a batch's temporary files durable. On Linux
// one syncfs per filesystem does it for all of them; a batch of one is
// fsynced, as syncfs would also wait for every other writer's data. The
// files of one directory are on one filesystem: one of them is asked which.
func syncMany(dirs []*batchDir) map[*tempFile]error {
	out := map[*tempFile]error{}
	n := 0
	for _, d := range dirs {
		n += len(d.tmps)
	}
	if n < 2 {
		for _, d := range dirs {
			fsyncEach(d.tmps, out)
		}
		return out
	}
	byDev := map[uint64][]*batchDir{}
	var devs []uint64
	for _, d := range dirs {
		if len(d.tmps) == 0 {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(d.tmps[0].fd, &st); err != nil {
			fsyncEach(d.tmps, out)
			continue
		}
		dev := uint64(st.Dev)
		if byDev[dev] == nil {
			devs = append(devs, dev)
		}
		byDev[dev] = append(byDev[dev], d)
	}
	for _, dev := range devs {
		group := byDev[dev]
		if err := unix.Syncfs(group[0].tmps[0].fd); err != nil {
			// A filesystem without syncfs support: fall back per file.
			for _, d := range group {
				fsyncEach(d.tmps, out)
			}
		}
	}
	return out
}
