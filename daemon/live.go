package daemon

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// Live is the part of the options a running daemon takes again when its
// configuration is reloaded. Zero fields keep their defaults, as in
// Options.
type Live struct {
	Idle         time.Duration
	TurnEndQuiet time.Duration
	Roots        []watchers.Root
	// Mapper carries the path mode, hash key, event cap and prices: a new
	// one applies to the next map written, and to every map already
	// written when its MapIdentity is another (identity.go).
	Mapper Mapper
	// MapIdentity names Mapper's options: a change writes every map again
	// (identity.go).
	MapIdentity string
	Exclude     func(dir string) bool
	// ExcludeKey identifies Exclude's patterns (see Options.ExcludeKey).
	ExcludeKey string
}

// Reconfigure hands a reloaded configuration to the running daemon. It
// never blocks: a configuration not yet taken is replaced by the newer one.
func (d *Daemon) Reconfigure(l Live) {
	for {
		select {
		case d.reconf <- l:
			return
		default:
		}
		select {
		case <-d.reconf:
		default:
		}
	}
}

// reconfigure applies a reloaded configuration in the loop; it reports
// whether the roots changed (the watcher must be started again).
func (d *Daemon) reconfigure(l Live) bool {
	o := d.opt
	prevKey := o.ExcludeKey
	o.Idle, o.TurnEndQuiet, o.Exclude, o.Mapper, o.Roots = l.Idle, l.TurnEndQuiet, l.Exclude, l.Mapper, l.Roots
	if d.rewrite != nil && o.MapIdentity != l.MapIdentity {
		// Maps written so far were written with the options before: the
		// rewrite records nothing, and its end starts one with these.
		d.rewrite.identity = ""
	}
	o.MapIdentity = l.MapIdentity
	defer d.identityInEffect()
	o.ExcludeKey = l.ExcludeKey
	o.fill()
	d.opt = o
	clear(d.ignored)
	if l.ExcludeKey == "" || l.ExcludeKey != prevKey || len(d.unforgotten) > 0 {
		// Logs kept out before are judged again by the new patterns;
		// nothing of them is in the state, so one now allowed is read
		// from its start. The same patterns again (a reload for another
		// setting) change nothing: applying them would take every
		// session let go of up again and read every kept log's first
		// lines. Patterns without a key are applied at each reload, and
		// any with sessions still to forget.
		for path := range d.excluded {
			d.keptOutBefore = append(d.keptOutBefore, path)
		}
		clear(d.excluded)
		d.agreeWithExclude()
	}
	changed := !slices.Equal(d.roots, l.Roots)
	d.roots = l.Roots
	if changed {
		// A log kept out under a root no longer followed is kept out no
		// more: status counts what privacy.exclude keeps out now, and the
		// new watcher reports no such log gone.
		for path := range d.excluded {
			if !slices.ContainsFunc(d.roots, func(r watchers.Root) bool { return underDir(path, r.Dir) }) {
				delete(d.excluded, path)
			}
		}
	}
	d.log.Info("configuration reloaded", "component", "daemon", "roots", len(d.roots), "rootsChanged", changed)
	return changed
}

// readKeptOut looks again at the logs privacy.exclude kept out before a
// reload changed it: one the new patterns allow is read from its start
// now, not when it next changes (the watcher reports changes only, and an
// excluded log left alone would never be read until a restart).
func (d *Daemon) readKeptOut(ctx context.Context) {
	if len(d.keptOutBefore) == 0 {
		return
	}
	was := map[string]bool{}
	for _, p := range d.keptOutBefore {
		was[p] = true
	}
	d.keptOutBefore = nil
	var files []watchers.FileStat
	for _, f := range watchers.Scan(d.roots) {
		if was[f.Path] {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		d.ingest(ctx, watchers.Update{Files: files})
	}
}

// underDir reports whether path is dir or below it.
func underDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
