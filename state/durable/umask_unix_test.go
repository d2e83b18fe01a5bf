//go:build unix

package durable

import "syscall"

func setUmask(m int) (restore func()) {
	old := syscall.Umask(m)
	return func() { syscall.Umask(old) }
}
