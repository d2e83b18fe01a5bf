//go:build unix

package pgtest

import (
	"os/exec"
	"syscall"
)

// credential is the unprivileged user a root test runs the server as.
type credential struct{ uid, gid int }

func runAs(cmd *exec.Cmd, c *credential) {
	if c != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid), NoSetGroups: true}}
	}
}
