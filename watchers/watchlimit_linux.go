package watchers

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// watchLimit explains a failure to watch as the limit it hit, naming the
// setting that raises it: inotify answers a full watch table with ENOSPC
// ("no space left on device", which reads as a full disk) and a full
// instance table with EMFILE. "" when err is no such limit.
func watchLimit(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the user's inotify watch limit is reached (fs.inotify.max_user_watches" + sysctlValue("max_user_watches") + ")"
	case errors.Is(err, syscall.EMFILE):
		// EMFILE is also the process's own descriptor limit.
		return "the user's inotify instance limit (fs.inotify.max_user_instances" + sysctlValue("max_user_instances") + ") or the open file limit (ulimit -n) is reached"
	}
	return ""
}

// sysctlValue is " = N" for an inotify limit, "" when it cannot be read.
func sysctlValue(name string) string {
	b, err := os.ReadFile("/proc/sys/fs/inotify/" + name)
	if err != nil {
		return ""
	}
	return " = " + strings.TrimSpace(string(b))
}
