package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/datadir"
	"github.com/agentmap/agentmap/state/mapstore"
)

// opsFlags are the flags every operator command shares.
type opsFlags struct {
	config  *string
	dataDir *string
}

func addOpsFlags(fl *flag.FlagSet) opsFlags {
	return opsFlags{
		config:  fl.String("config", "", "the config file (its data_dir is used)"),
		dataDir: fl.String("data-dir", "", "the daemon's data directory (default: data_dir of the config)"),
	}
}

// resolve returns the data directory the flags name: --data-dir, else
// data_dir of the config (--config, else $AGENTMAP_CONFIG, else the usual
// file). Every command with a data directory comes through here or, for
// run and scan, applies the same rule (runOverrides.apply).
func (o opsFlags) resolve(what string, stderr io.Writer) (string, int) {
	if *o.dataDir != "" {
		// A --config given beside it is read all the same, and what is
		// wrong with it said as without --data-dir: one missing or
		// unreadable is an error, one with problems a warning (the
		// command may use more of it than its data_dir, and a mistyped
		// name must not pass in silence).
		if *o.config != "" {
			if code := o.configBeside(what, stderr); code != exitOK {
				return "", code
			}
		}
		// Checked as a config's data_dir is: export writes its key there.
		if err := daemon.SafeDataDir(*o.dataDir); err != nil {
			fmt.Fprintf(stderr, "agentmap %s: --data-dir: %v\n", what, err)
			return "", exitUsage
		}
		dataDirSeen(*o.dataDir)
		return *o.dataDir, exitOK
	}
	if dir, ok := dataDirDespiteProblems(*o.config, what, stderr); ok {
		dataDirSeen(dir)
		return dir, exitOK
	}
	var said bytes.Buffer
	c, code := loadConfig(*o.config, what, &said)
	if c != nil && c.DataDir == "" {
		// The defaults without a home (homeless): the missing home is
		// the error, not a note that the defaults are in effect.
		fmt.Fprintf(stderr, "agentmap %s: %v\n", what, errNoDataDir())
		return "", exitFailure
	}
	stderr.Write(said.Bytes())
	if c == nil {
		return "", code
	}
	dataDirSeen(c.DataDir)
	return c.DataDir, exitOK
}

// dataDirDespiteProblems is the data directory of a config file whose
// other settings have problems: the problems are printed as a warning and
// the command reads that directory, where a running daemon, which kept its
// configuration when the file was rejected at reload, still writes. A
// typo must not hide status, list or show. ok is false when the file has
// no problem (loadConfig reads it), or when its problems leave the data
// directory unknown (loadConfig reports them).
func dataDirDespiteProblems(flagValue, what string, stderr io.Writer) (string, bool) {
	path, err := config.Path(flagValue)
	if err != nil {
		return "", false
	}
	dir, ok, probs := config.DataDirOf(path)
	if !ok || probs == nil {
		return "", false
	}
	list := config.Problems(probs)
	for _, p := range list {
		fmt.Fprintln(stderr, p.Error())
	}
	fmt.Fprintf(stderr, "agentmap %s: warning: %s has %d problem(s) (agentmap config check); reading the data directory it names, %s\n", what, path, len(list), dir)
	return dir, true
}

// configBeside reads a --config given beside --data-dir, to say what is
// wrong with it: a file not there, not readable or not a regular file is
// an error, as without --data-dir (a mistyped name must not pass in
// silence); problems in it a warning, its data_dir's too, since
// --data-dir decides. The path is the one loadConfig reads (~ expanded).
func (o opsFlags) configBeside(what string, stderr io.Writer) int {
	path, err := config.Path(*o.config)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", what, err)
		return exitFailure
	}
	if _, missing := missingConfig(*o.config); missing {
		fmt.Fprintf(stderr, "agentmap %s: %s\n", what, noConfigFile(path))
		return exitFailure
	}
	_, err = config.Load(path)
	if err == nil {
		return exitOK
	}
	list := config.Problems(err)
	if len(list) == 0 {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", what, err) // not readable, not a regular file
		return exitFailure
	}
	for _, p := range list {
		fmt.Fprintln(stderr, p.Error())
	}
	fmt.Fprintf(stderr, "agentmap %s: warning: %s has %d problem(s) (agentmap config check); --data-dir decides where to read\n", what, path, len(list))
	return exitOK
}

// givenDirMissing reports, having said so, that the data directory named
// by --data-dir is not there (or is no directory): a mistyped name would
// read as an empty store, "no sessions" and exit 0. The data directory of
// the config, or the default one, not there yet is a machine where no
// daemon or scan has run: an empty store, which each command says in its
// own words.
func (o opsFlags) givenDirMissing(cmd, dataDir string, stderr io.Writer) bool {
	if *o.dataDir == "" {
		return false
	}
	fi, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "agentmap %s: --data-dir %s: no such directory\n", cmd, dataDir)
	case err != nil:
		fmt.Fprintf(stderr, "agentmap %s: --data-dir %s: %v\n", cmd, dataDir, describeOpenError(err))
	case !fi.IsDir():
		fmt.Fprintf(stderr, "agentmap %s: --data-dir %s: not a directory\n", cmd, dataDir)
	default:
		return false
	}
	return true
}

// noMapsYet is what the commands that list the store say of a store with
// no map at all.
const noMapsYet = "no maps yet: agentmap scan makes them"

// dataDirSeen is told each data directory a command settles on; tests
// replace it to check that every command settles on the same one.
var dataDirSeen = func(string) {}

// backend is where an operator command gets its answers: the running
// daemon over its socket, or, when none runs, the state database opened
// read-only and the map store. bbolt is locked by a running daemon, so the
// two are never used together.
type backend struct {
	dataDir string
	client  *daemon.Client // set when a daemon answers
	db      *state.DB      // set when no daemon runs and a state exists
	store   *mapstore.Store
	// locked is set when a daemon holds the state but its socket does not
	// answer (Windows, or a socket that failed): only the store is read.
	locked bool
}

// hasLiveSessions reports whether a running daemon follows sessions whose
// changes are not in a map yet (a new session has none at all).
func (b *backend) hasLiveSessions(ctx context.Context) bool {
	if b.client == nil {
		return false
	}
	st, err := b.client.Status(ctx)
	if err != nil {
		return false
	}
	for _, a := range st.Agents {
		if a.Live > 0 {
			return true
		}
	}
	return false
}

func openBackend(dataDir string) (*backend, error) {
	b := &backend{dataDir: dataDir, store: mapstore.New(daemon.MapsDir(dataDir))}
	c, err := daemon.Connect(dataDir)
	if err == nil {
		b.client = c
		return b, nil
	}
	if !errors.Is(err, daemon.ErrNoDaemon) {
		return nil, err
	}
	if daemon.Held(dataDir) {
		// A scan, or a daemon without its socket: it holds state.db
		// locked, and bbolt's pages are not to be read without the lock
		// while another process commits. The store alone is read.
		b.locked = true
		return b, nil
	}
	db, err := state.OpenReadOnly(daemon.StatePath(dataDir))
	switch {
	case err == nil:
		b.db = db
	case errors.Is(err, state.ErrLocked):
		b.locked = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, err
	}
	return b, nil
}

// open resolves the data directory of an operator command and opens its
// backend: the running daemon's socket, else the state and the store. On
// failure it has reported on stderr and returns the exit code.
func (o opsFlags) open(cmd string, stderr io.Writer) (*backend, int) {
	dataDir, code := o.resolve(cmd, stderr)
	if dataDir == "" {
		return nil, code
	}
	if o.givenDirMissing(cmd, dataDir, stderr) {
		return nil, exitFailure
	}
	if _, err := os.Stat(dataDir); err == nil {
		if err := datadir.Check(dataDir); err != nil {
			// Read all the same (what is there is the user's to see), but
			// not in silence: anyone who may write there may have put
			// what is read.
			fmt.Fprintf(stderr, "agentmap %s: warning: %v (scan and run refuse it)\n", cmd, err)
		}
	}
	b, err := openBackend(dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentmap %s: %v\n", cmd, err)
		return nil, exitFailure
	}
	return b, exitOK
}

func (b *backend) close() {
	if b.db != nil {
		b.db.Close()
	}
}

func (b *backend) entries(ctx context.Context) ([]daemon.Entry, error) {
	if b.client != nil {
		return b.client.List(ctx)
	}
	return daemon.Entries(b.db, b.store)
}

// entriesNamed lists the entries an id typed to show or flush may name
// (daemon.Named), for findEntry to pick from: not the whole store's.
//
// A map no record names whose file is named otherwise than its session (a
// map renamed, copied in) is found only by reading it: when the narrowed
// listing names nothing, the whole one is read before saying so.
func (b *backend) entriesNamed(ctx context.Context, id string) ([]daemon.Entry, error) {
	n := daemon.Named{ID: id, Key: keyOf(id)}
	var es []daemon.Entry
	var err error
	if b.client != nil {
		es, err = b.client.Named(ctx, n)
	} else {
		es, err = daemon.EntriesNamed(b.db, b.store, n)
	}
	if err != nil {
		return nil, err
	}
	if _, ferr := findEntry(es, id); errors.Is(ferr, errNoEntry) {
		return b.entries(ctx)
	}
	return es, nil
}

func (b *backend) status(ctx context.Context) (daemon.Status, bool, error) {
	if b.client != nil {
		st, err := b.client.Status(ctx)
		return st, true, err
	}
	if b.db == nil {
		return daemon.Status{DataDir: b.dataDir}, false, nil
	}
	st, err := daemon.OfflineStatus(b.db, b.dataDir)
	return st, false, err
}

// describe says where the answers come from, for the first line of status.
func (b *backend) describe() string {
	switch {
	case b.client != nil:
		return "running (answering on " + daemon.ControlPath(b.dataDir) + ")"
	case b.locked:
		return "running " + heldWithoutSocket + "; reading the map store only"
	case b.db != nil:
		return "not running (read from " + daemon.StatePath(b.dataDir) + ")"
	}
	return fmt.Sprintf("not running, and no state in %s yet", b.dataDir)
}

// heldWithoutSocket says what runs on a data directory whose lock is held
// while no control socket answers there: flush, scan and status say it in
// the same words.
const heldWithoutSocket = "without a control socket that answers (a scan, a daemon still starting, or one that could not serve it: see its log)"

// heldMessage is the error of a command that finds the data directory so
// held: what runs there, and what to do before doing it again.
func heldMessage(cmd, dataDir string) string {
	return fmt.Sprintf("agentmap %s: agentmap is running on %s %s; wait for the scan to end or the daemon to start, or restart the service (agentmap restart), and %s again",
		cmd, dataDir, heldWithoutSocket, cmd)
}

// newestMap is when the newest map in the store was written (zero when
// there is none): what a status can tell of the last flush while the
// state that records it is held by another process.
func (b *backend) newestMap() time.Time {
	var newest time.Time
	rels, _ := b.store.List()
	for _, rel := range rels {
		if fi, err := os.Stat(filepath.Join(b.store.Root, rel)); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
