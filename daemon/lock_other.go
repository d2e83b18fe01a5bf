//go:build !unix

package daemon

// LockName is the file a daemon or a scan holds locked while it uses a
// data directory (unix only: elsewhere the state database's lock alone
// keeps a second daemon out).
const LockName = "agentmap.lock"

func lockDataDir(string) (func(), error) { return func() {}, nil }

// Held is false here: no lock to look at (the state database's lock
// answers when it is opened).
func Held(string) bool { return false }
