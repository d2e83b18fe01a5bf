package cursor

import (
	"os"

	"golang.org/x/sys/unix"
)

// birthMs reads the birth time with statx; 0 when the file system does not
// record it.
func birthMs(path string, _ os.FileInfo) int64 {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &st); err != nil {
		return 0
	}
	if st.Mask&unix.STATX_BTIME == 0 || st.Btime.Sec <= 0 {
		return 0
	}
	return st.Btime.Sec*1000 + int64(st.Btime.Nsec)/1e6
}
