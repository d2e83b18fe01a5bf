//go:build windows

package daemon

import "os"

func maxRSSKB(*os.ProcessState) (int64, bool) { return 0, false }
