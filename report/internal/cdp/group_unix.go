//go:build unix

package cdp

import (
	"os/exec"
	"syscall"
)

// inGroup starts the browser as the leader of a process group of its own,
// so that its renderer, GPU and crash-handler children can be stopped with
// it: killed alone, the main process leaves them writing to the profile
// directory for a moment, while the caller removes it.
func inGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills every process of the browser's group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
