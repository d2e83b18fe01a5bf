package cursor

import "os"

// FileTimes returns the times that bound a transcript's session, in Unix
// ms: the file's birth time where the file system records one (0
// otherwise), and its modification time. They are what SetFile takes.
func FileTimes(path string) (startMs, endMs int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	endMs = fi.ModTime().UnixMilli()
	startMs = birthMs(path, fi)
	if startMs > endMs {
		startMs = endMs
	}
	return startMs, endMs, nil
}
