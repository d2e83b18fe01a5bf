package main

import "os"

// notifyHangup: Windows has no SIGHUP; the config file is still polled.
func notifyHangup(chan<- os.Signal) {}
