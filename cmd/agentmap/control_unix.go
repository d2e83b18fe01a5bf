//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyHangup delivers SIGHUP, the conventional "reload your config".
func notifyHangup(c chan<- os.Signal) { signal.Notify(c, syscall.SIGHUP) }
