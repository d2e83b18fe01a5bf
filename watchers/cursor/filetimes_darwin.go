package cursor

import (
	"os"
	"syscall"
)

// birthMs reads the birth time macOS keeps for every file.
func birthMs(_ string, fi os.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Birthtimespec.Sec <= 0 {
		return 0
	}
	return st.Birthtimespec.Sec*1000 + st.Birthtimespec.Nsec/1e6
}
