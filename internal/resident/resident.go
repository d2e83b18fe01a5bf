// Package resident reads how much of a file's memory mapping this process
// holds resident, for the tests that check that the state database's pages
// are let go of.
package resident

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
)

// ErrUnsupported is returned where the kernel does not say (no
// /proc/self/smaps: not Linux).
var ErrUnsupported = errors.New("resident: no /proc/self/smaps on this system")

// Mapped returns the resident size, in KiB, of this process's mappings of
// path (/proc/self/smaps).
func Mapped(path string) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, ErrUnsupported
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: "start-end perms offset dev inode path".
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, sc.Err()
}
