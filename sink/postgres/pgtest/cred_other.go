//go:build !unix

package pgtest

import "os/exec"

// credential is unused where processes cannot change user: there the tests
// are not root, and the server runs as the test's user.
type credential struct{ uid, gid int }

func runAs(*exec.Cmd, *credential) {}
