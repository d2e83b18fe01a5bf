//go:build windows

package watchers

import (
	"os"
	"syscall"

	"github.com/agentmap/agentmap/internal/regular"
)

// StatID returns the identity from a stat result. Windows does not expose
// the file index through stat, so a scan sees it as unknown; the tailer
// reads it from the open handle.
func StatID(os.FileInfo) FileID { return FileID{} }

func openID(f *os.File, _ os.FileInfo) (FileID, error) {
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &info); err != nil {
		return FileID{}, err
	}
	return FileID{
		Dev: uint64(info.VolumeSerialNumber),
		Ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
	}, nil
}

// OpenLog opens a log for reading; what is not a regular file is refused
// (see regular.Open).
func OpenLog(path string) (*os.File, error) { return regular.Open(path) }

// HardLinks is how many names the file of fi has: 1, as StatID gives no
// identity here to tell two names apart by.
func HardLinks(os.FileInfo) uint64 { return 1 }
