package daemon

import (
	"context"
	"time"

	"github.com/agentmap/agentmap/state"
)

// stateCheckEvery is how often a following daemon looks that its state
// database is still the file at its path: a stat, nothing read.
const stateCheckEvery = 10 * time.Second

// watchStateFile stops the daemon when its state database is removed or
// replaced under it (state.DB.Replaced), or damaged under it so that bbolt
// panicked (state.DB.Unusable: every later transaction would fail). Going on would write every cursor
// to a file nobody reads again, and, the lock being on that file, let a
// second daemon start on the same data directory. Stopping with the reason
// lets the service manager start it again, on a new database that is
// rebuilt from the logs. The returned context ends with that reason as its
// cause; stop ends the watch.
func watchStateFile(ctx context.Context, db *state.DB, every time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-db.Failed():
				cancel(db.Unusable())
				return
			case <-t.C:
				if err := db.Replaced(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// stopOnFailure is ctx, ended when db becomes unusable (a scan's: it then
// stops at once instead of retrying commits and flushes that cannot
// succeed, and says why); stop ends the watch.
func stopOnFailure(ctx context.Context, db *state.DB) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-db.Failed():
			cancel()
		}
	}()
	return ctx, cancel
}
