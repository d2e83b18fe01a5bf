package daemon

import (
	"log/slog"
	"net"
)

// On Windows the daemon serves no socket: the commands read the state
// directly (bbolt opened read-only alongside the daemon is refused, so they
// say the daemon holds it).
func listenControl(string, *slog.Logger) (net.Listener, error) { return nil, nil }

func dialControl(string) (net.Conn, error) { return nil, ErrNoDaemon }

// shortSocketDir is unused: no socket on Windows.
var shortSocketDir = ""

func peerUID(net.Conn) (int, error) { return -1, nil }
