// Package postgres is the team sink: it sends the maps a daemon writes to a
// PostgreSQL database shared by a team, exactly once per version, and reads
// them back for the report. The daemon queues each flushed session in the
// state database (state.Outbox, in the flush's own transaction); a Sender
// pushes the queue in batches with an upsert keyed by (device, session) and
// guarded by the content hash, so duplicates, retries and crashes never
// leave a session twice or an old version over a new one. A machine's role
// reads no map: it may read only the keys the upsert's guard compares
// (docs/team-database-grants.sql, which `agentmap sink grants` prints),
// and row-level security (migration 6) keeps it to the rows of its own
// devices.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/docs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the pg_advisory_xact_lock key under which migrations
// run: many daemons starting at once apply each migration once.
const migrationLock int64 = 0x6167656e746d6170 // "agentmap"

// history is what the code knows of each migration besides its SQL, by
// version; every migration file has an entry (migrations checks it).
//
// objects are the tables and views it creates, which checkObjects looks
// for (a list, not a reading of the SQL: a comment or a string that looks
// like a CREATE must not add to it, and a change of a file's wording must
// not take from it).
//
// minWriter is the oldest schema whose writers still write correct rows
// into the schema this migration leaves: a migration that adds only
// views and indexes (or columns with defaults no writer needs) keeps the
// writers before it (minWriter below its version); one that changes what a
// writer must write does not (minWriter = its version). A writer of schema
// w writes into a database at schema v when every migration between the
// two keeps writers of the older (minWriter <= min(w, v)): a new build
// pushes into a database its owner has not migrated yet, and an older one
// into a database a newer build migrated, when the migrations allow it.
// Each migration's minWriter is recorded in schema_migrations.min_writer
// as it is applied, so that a build older than a migration can read it.
var history = map[int]struct {
	objects   []string
	minWriter int
}{
	1: {[]string{"agentmap.devices", "agentmap.sessions", "agentmap.events", "agentmap.files"}, 1},
	2: {[]string{"agentmap.cost_per_repo_week", "agentmap.failing_verbs", "agentmap.mcp_failure_rates", "agentmap.outcomes_per_agent"}, 1},
	// An index and a view, and the four views made to read it: writers of
	// schema 1 and 2 write the same rows.
	3: {[]string{"agentmap.latest_sessions"}, 1},
	// A column the server generates from the map, whoever writes the row,
	// a view and the four views made to read it: writers of schemas 1 to 3
	// write the same rows.
	4: {[]string{"agentmap.counted_sessions"}, 1},
	// A column a writer of this schema fills (which models had no price),
	// and the views made to show it. A writer before it leaves the column
	// NULL (not known), which the views count as priced: its rows are not
	// wrong, they say less.
	5: {nil, 1},
	// Row-level security and triggers: a writing role writes only its own
	// devices' rows. Writers before it write the same statements, which
	// the policies let through for their own devices.
	6: {nil, 1},
	// failing_verbs made to count test and build commands (kind verify)
	// as the report does: a view, the rows written stay the same.
	7: {nil, 1},
	// cost_per_repo_week made to count a session in each of its
	// repositories, as the report does: a view, the rows written stay the
	// same.
	8: {nil, 1},
}

type migration struct {
	version   int
	name      string
	sql       string
	minWriter int
}

// migrations are the embedded files NNN_name.sql, in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name is not NNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		h, ok := history[v]
		if !ok || h.minWriter < 1 || h.minWriter > v {
			return nil, fmt.Errorf("migration %s: no entry of its own in history", e.Name())
		}
		out = append(out, migration{v, e.Name(), string(b), h.minWriter})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	if len(history) != len(out) {
		return nil, fmt.Errorf("history has %d migrations, the files %d", len(history), len(out))
	}
	return out, nil
}

// SchemaVersion is the schema this build writes and reads.
func SchemaVersion() int { return schemaVersionOnce() }

// schemaVersionOnce reads the embedded migrations once: every push checks
// the version against it.
var schemaVersionOnce = sync.OnceValue(func() int {
	ms, _ := migrations()
	return len(ms)
})

// ErrSchemaTooNew means the team database was migrated by a newer agentmap,
// in a way this build cannot write into.
var ErrSchemaTooNew = errors.New("the team database's schema is newer than this agentmap")

// ErrSchemaOld means the team database's schema is behind this build's in
// a way this build cannot write into (no schema yet, or restored from an
// older backup): `agentmap sink migrate` as the schema's owner brings it
// up.
var ErrSchemaOld = errors.New("the team database's schema is older than this agentmap")

// ErrSchemaDamaged means a table or view of the schema is missing.
var ErrSchemaDamaged = errors.New("the team database's schema is damaged")

// ErrNotOwner means the role connected may not migrate the schema: it does
// not own (is not a member of the owner of) the schema and each of its
// tables and views, or, without the schema, may not create it.
var ErrNotOwner = errors.New("this role may not migrate the team database's schema")

// ownerHint is what a role that may not create or read the schema is
// told. It names the grants by the command that prints them and the setup
// where it is on this machine: a package has no docs/ folder.
func ownerHint() string {
	return "run `agentmap sink migrate` as the schema's owner and apply the grants to this role (`agentmap sink grants` prints them; " +
		docs.Path(docs.TeamDatabase) + ", \"Setting it up\")"
}

// errNewerMeanwhile is migrate's finding that a newer build migrated the
// schema between Prepare's look and the migrations' lock.
var errNewerMeanwhile = errors.New("the schema was migrated by a newer agentmap meanwhile")

// tooNew is the error of a schema newer than this build's, the same at
// start and at each push.
func tooNew(v, known int) error {
	return fmt.Errorf("%w (schema %d, this build knows %d): it refuses to write; upgrade agentmap on this machine, the queue waits meanwhile", ErrSchemaTooNew, v, known)
}

// tooOld is the error of a schema behind this build's that it cannot
// write into.
func tooOld(v, known int) error {
	if v == 0 {
		return fmt.Errorf("%w: the database has no agentmap schema yet; %s", ErrSchemaOld, ownerHint())
	}
	return fmt.Errorf("%w (schema %d, this build writes %d): run `agentmap sink migrate` as the schema's owner", ErrSchemaOld, v, known)
}

// schemaState is the schema a connection finds: its version (0 before the
// first migration) and the newest writer floor among the migrations this
// build does not know (their min_writer, or their version where none is
// recorded; 0 when there are none).
type schemaState struct {
	version, newerFloor int
}

// versionQuery reads a schemaState; $1 is this build's version. The
// min_writer column is read through to_jsonb, so that the query works on a
// schema_migrations made before the column was.
const versionQuery = `SELECT coalesce(max(version), 0),
	coalesce(max(coalesce((to_jsonb(m) ->> 'min_writer')::integer, version)) FILTER (WHERE version > $1), 0)
	FROM agentmap.schema_migrations m`

// writable is nil when this build may write into a schema in state st: the
// same version; a newer one whose migrations keep this build's writers; an
// older one (not none) whose missing migrations all keep its writers.
func writable(st schemaState) error {
	known := SchemaVersion()
	switch {
	case st.version == known:
		return nil
	case st.version > known:
		if st.newerFloor <= known {
			return nil
		}
		return tooNew(st.version, known)
	case st.version > 0 && floorAfter(st.version) <= st.version:
		return nil
	}
	return tooOld(st.version, known)
}

// floorAfter is the oldest writer every migration of this build after
// version v keeps (the highest of their minWriter; 0 when there are none).
func floorAfter(v int) int {
	f := 0
	for m := v + 1; m <= SchemaVersion(); m++ {
		f = max(f, history[m].minWriter)
	}
	return f
}

// Migrate is `agentmap sink migrate`: it brings the schema agentmap up to
// this build's version and checks that every table and view of it is
// there. A database already at the version needs no DDL privilege and
// takes no lock; a database a newer build migrated is left as it is when
// this build may write into it (and refused otherwise). Otherwise it first
// checks, taking no lock, that the role may migrate (mayMigrate: it owns
// the schema and its tables and views), naming their owners when it may
// not; then the migrations run in one transaction under an advisory lock,
// so that daemons starting together wait for one another and none applies
// a migration twice. The schema itself is created only when it does not
// exist: PostgreSQL checks CREATE on the database before IF NOT EXISTS,
// and the owner of a schema an administrator made has no such privilege.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	st, err := readSchema(ctx, pool)
	if err != nil {
		return whoOwns(ctx, pool, err)
	}
	if st.version > len(ms) {
		if err := writable(st); err != nil {
			return err
		}
	}
	if st.version < len(ms) {
		if err, _ := mayMigrate(ctx, pool); err != nil {
			return err
		}
		if err := migrate(ctx, pool, ms); err != nil {
			return err
		}
	}
	return checkObjects(ctx, pool, len(ms))
}

// Prepare is what a daemon's sender does when it connects: it checks that
// this build may write into the schema as it is, and that every table and
// view of it is there, and returns the schema's version. It migrates a
// schema behind this build's only when the role may (it owns the schema
// and its tables and views: a daemon that connects as the owner); a role
// that may not (the machines' role, which runs no DDL) writes into a
// schema behind when the missing migrations keep its writers, and is
// refused otherwise, without taking the migrations' lock or trying any
// DDL. `agentmap sink migrate` as the owner brings the schema up.
func Prepare(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	known := len(ms)
	st, err := readSchema(ctx, pool)
	if err != nil {
		return 0, whoOwns(ctx, pool, err)
	}
	if st.version >= known {
		if err := writable(st); err != nil {
			return st.version, err
		}
		return st.version, checkObjects(ctx, pool, known)
	}
	switch err, _ := mayMigrate(ctx, pool); {
	case err == nil:
		err := migrate(ctx, pool, ms)
		if err == nil {
			return known, checkObjects(ctx, pool, known)
		}
		if !errors.Is(err, errNewerMeanwhile) && !conflict(err) {
			return st.version, err
		}
		// Migrated by a newer build meanwhile, or its locks not granted
		// in time (a long reader): write into the schema as it is, if
		// this build may, as the machines' role does.
		if st, err = readSchema(ctx, pool); err != nil {
			return 0, err
		}
		if err := writable(st); err != nil {
			return st.version, err
		}
		return st.version, checkObjects(ctx, pool, min(st.version, known))
	case !errors.Is(err, ErrNotOwner):
		return st.version, err
	}
	if err := writable(st); err != nil {
		return st.version, err
	}
	return st.version, checkObjects(ctx, pool, st.version)
}

// Version is the version of the team database's schema (0 before the
// first migration).
func Version(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	st, err := readSchema(ctx, pool)
	return st.version, err
}

// whoOwns is the error of a schema a role may not read (err): when the
// role owns the schema but not its tables (made by another role), it says
// who owns them and what to do (mayMigrate), where the server's permission
// error would tell the owner to run `agentmap sink migrate` as the owner.
func whoOwns(ctx context.Context, pool *pgxpool.Pool, err error) error {
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "42501" {
		return err
	}
	if owned, ownsSchema := mayMigrate(ctx, pool); owned != nil && ownsSchema {
		return owned
	}
	return err
}

// mayMigrate is nil when the role connected may run the migrations: it
// owns (is a member of the owner of) the schema and each of the schema's
// tables and views, or, without the schema, may create it. Otherwise it
// says who owns what (ErrNotOwner): a database whose tables another role
// made (an earlier `agentmap sink migrate` run as a superuser) needs them
// given to the schema's owner first. ownsSchema says whether the role owns
// the schema.
func mayMigrate(ctx context.Context, pool *pgxpool.Pool) (err error, ownsSchema bool) {
	var names []string
	for _, h := range history {
		for _, o := range h.objects {
			names = append(names, strings.TrimPrefix(o, "agentmap."))
		}
	}
	names = append(names, "schema_migrations")
	var (
		exists, owns, mayCreate, bootstrap bool
		me, owner                          string
		others                             []string
	)
	err = pool.QueryRow(ctx, `SELECT current_user, n.oid IS NOT NULL,
			coalesce(pg_has_role(current_user, n.nspowner, 'USAGE'), false),
			has_database_privilege(current_database(), 'CREATE'),
			coalesce(pg_get_userbyid(n.nspowner)::text, ''),
			coalesce((SELECT array_agg(DISTINCT pg_get_userbyid(c.relowner)::text ORDER BY pg_get_userbyid(c.relowner)::text)
				FROM pg_catalog.pg_class c
				WHERE c.relnamespace = n.oid AND c.relname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm')
				AND NOT pg_has_role(current_user, c.relowner, 'USAGE')), '{}'),
			EXISTS (SELECT 1 FROM pg_catalog.pg_class c
				WHERE c.relnamespace = n.oid AND c.relname = ANY($1::text[]) AND c.relowner = 10 -- the bootstrap superuser
				AND NOT pg_has_role(current_user, c.relowner, 'USAGE'))
		FROM (SELECT 1) one LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = 'agentmap'`, names).
		Scan(&me, &exists, &owns, &mayCreate, &owner, &others, &bootstrap)
	if err != nil {
		return fmt.Errorf("migrate: who owns the schema: %w", withHint(safeErr(err))), false
	}
	switch {
	case !exists && !mayCreate:
		return fmt.Errorf("%w: the schema agentmap does not exist and this role (%s) may not create it: as the database's administrator, CREATE SCHEMA agentmap AUTHORIZATION <the owner's role>, then %s",
			ErrNotOwner, me, ownerHint()), false
	case exists && !owns:
		return fmt.Errorf("%w: the schema agentmap belongs to %s, not to this role (%s): run `agentmap sink migrate` as %s, the schema's owner (%s)",
			ErrNotOwner, owner, me, owner, docs.Path(docs.TeamDatabase)), false
	case len(others) > 0:
		reassign := ""
		if !bootstrap && len(others) == 1 {
			// The bootstrap superuser's objects REASSIGN OWNED refuses.
			reassign = fmt.Sprintf(", or REASSIGN OWNED BY %s TO %s where %s owns nothing else", others[0], me, others[0])
		}
		return fmt.Errorf("%w: tables or views of the schema agentmap belong to %s, not to %s, the schema's owner this migrate connects as (an earlier `agentmap sink migrate` ran as %s?): as a superuser, ALTER TABLE/VIEW … OWNER TO %s for each of them%s; then run `agentmap sink migrate` again (%s, \"Tables another role owns\")",
			ErrNotOwner, strings.Join(others, " and "), me, others[0], me, reassign, docs.Path(docs.TeamDatabase)), true
	}
	return nil, owns
}

func migrate(ctx context.Context, pool *pgxpool.Pool, ms []migration) error {
	return inTx(ctx, pool, "migrate", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", safeErr(err))
		}
		// Every DDL below waits for the tables' locks at most this long:
		// queued behind a long reader (a pg_dump, an idle transaction), an
		// ALTER would hold back every push's version read for as long.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '10s'"); err != nil {
			return fmt.Errorf("migrate: %w", safeErr(err))
		}
		var schema, table, column bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'agentmap'),
			to_regclass('agentmap.schema_migrations') IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_catalog.pg_attribute WHERE attrelid = to_regclass('agentmap.schema_migrations')
				AND attname = 'min_writer' AND NOT attisdropped)`).Scan(&schema, &table, &column); err != nil {
			return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
		}
		if schema {
			// The objects made below belong to the schema's owner, whoever
			// runs them: a superuser (`postgres`) or a member of the owner
			// role migrating as itself would leave tables another role
			// owns, which the owner could not migrate later.
			var owner string
			var same bool
			if err := tx.QueryRow(ctx, `SELECT n.nspowner::regrole::text, n.nspowner = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user)
				FROM pg_catalog.pg_namespace n WHERE n.nspname = 'agentmap'`).Scan(&owner, &same); err != nil {
				return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
			}
			if !same {
				if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+owner); err != nil { // regrole's text is quoted as an identifier
					return fmt.Errorf("migrate: act as the schema's owner: %w", migrateHint(safeErr(err)))
				}
			}
		}
		if !schema {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA agentmap"); err != nil {
				err = safeErr(err)
				var se *ServerError
				if errors.As(err, &se) && se.Code == "42501" {
					return fmt.Errorf("migrate: the schema agentmap does not exist and this role may not create it: %w; as the database's administrator, CREATE SCHEMA agentmap AUTHORIZATION <the owner's role>, then %s", err, ownerHint())
				}
				return fmt.Errorf("migrate: create the schema agentmap: %w", err)
			}
		}
		switch {
		case !table:
			if _, err := tx.Exec(ctx, `CREATE TABLE agentmap.schema_migrations (
				version integer PRIMARY KEY,
				name text NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now(),
				min_writer integer)`); err != nil {
				return fmt.Errorf("migrate: %w", migrateHint(safeErr(err)))
			}
		case !column:
			// Made by a build before the column: the oldest writer of each
			// migration is recorded from now on (history, below).
			if _, err := tx.Exec(ctx, "ALTER TABLE agentmap.schema_migrations ADD COLUMN min_writer integer"); err != nil {
				return fmt.Errorf("migrate: %w", migrateHint(safeErr(err)))
			}
		}
		var v int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM agentmap.schema_migrations").Scan(&v); err != nil {
			return fmt.Errorf("migrate: %w", withHint(safeErr(err)))
		}
		if v > len(ms) {
			return errNewerMeanwhile // another build migrated meanwhile: Prepare looks again
		}
		for _, m := range ms[v:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, migrateHint(safeErr(err)))
			}
			if _, err := tx.Exec(ctx, "INSERT INTO agentmap.schema_migrations (version, name, min_writer) VALUES ($1, $2, $3)",
				m.version, m.name, m.minWriter); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, migrateHint(safeErr(err)))
			}
		}
		// Migrations an older build applied, before the column.
		var versions, writers []int32
		for _, m := range ms {
			versions, writers = append(versions, int32(m.version)), append(writers, int32(m.minWriter))
		}
		if _, err := tx.Exec(ctx, `UPDATE agentmap.schema_migrations s SET min_writer = h.w
			FROM unnest($1::integer[], $2::integer[]) AS h(v, w) WHERE s.version = h.v AND s.min_writer IS NULL`, versions, writers); err != nil {
			return fmt.Errorf("migrate: %w", migrateHint(safeErr(err)))
		}
		return nil
	})
}

// migrateHint adds what to do to a migration's failure: a lock not granted
// in time (lock_timeout: a long query or transaction holds a table or view
// of the schema) passes when tried again; a missing privilege is the
// owner's hint.
func migrateHint(err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Code == "55P03" {
		return fmt.Errorf("%w; a long query or transaction holds a table or view of the schema: run `agentmap sink migrate` again when it ends", err)
	}
	return withHint(err)
}

// objects are the tables and views of the schema at version v,
// "agentmap.name", in the order the migrations create them.
func objects(v int) []string {
	out := []string{"agentmap.schema_migrations"}
	for m := 1; m <= v; m++ {
		out = append(out, history[m].objects...)
	}
	return out
}

// checkObjects fails, naming them, when tables or views of the schema at
// version v are missing (dropped by hand, or a partial restore): a schema
// at its version in schema_migrations is not necessarily whole.
func checkObjects(ctx context.Context, pool *pgxpool.Pool, v int) error {
	var missing []string
	if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(o ORDER BY n), '{}') FROM unnest($1::text[]) WITH ORDINALITY AS t(o, n)
		WHERE to_regclass(o) IS NULL`, objects(v)).Scan(&missing); err != nil {
		return fmt.Errorf("check the schema: %w", withHint(safeErr(err)))
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing (dropped?): restore it from a backup, or drop the schema agentmap and run `agentmap sink migrate` again, then `agentmap sink resend` on every machine",
			ErrSchemaDamaged, listed(missing))
	}
	if v < replacingSchema {
		return nil
	}
	// From schema 6 a writer leaves the removal of a session's old events
	// and files to the trigger: without it, a new version's COPY would meet
	// the old rows (a duplicate key), and say nothing of why.
	var trigger bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger
		WHERE tgrelid = 'agentmap.sessions'::regclass AND tgname = 'replace_rows' AND NOT tgisinternal)`).Scan(&trigger); err != nil {
		return fmt.Errorf("check the schema: %w", withHint(safeErr(err)))
	}
	if !trigger {
		return fmt.Errorf("%w: the trigger replace_rows of agentmap.sessions is missing (dropped?): as the schema's owner, create it again as migration 6 (006_device_owners.sql) does, or restore the schema from a backup",
			ErrSchemaDamaged)
	}
	return nil
}

func listed(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are"
}

// checkVersion is a push's check of the schema, in the push's own
// transaction: a shared hold of the migrations' lock (a migration running
// now finishes first, and none starts before the push ends), then the
// version. A daemon whose pool outlived a migration by a newer agentmap
// that this build cannot write into refuses to write as it does at start.
// It returns the version, by which the push writes what that schema holds.
func checkVersion(ctx context.Context, tx pgx.Tx) (int, error) {
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock_shared($1)", migrationLock)
	b.Queue(versionQuery, SchemaVersion())
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return 0, fmt.Errorf("check the schema version: %w", withHint(safeErr(err)))
	}
	var st schemaState
	if err := br.QueryRow().Scan(&st.version, &st.newerFloor); err != nil {
		return 0, fmt.Errorf("check the schema version: %w", withHint(safeErr(err)))
	}
	if err := writable(st); err != nil {
		return 0, err
	}
	return st.version, br.Close()
}

// readSchema reads the schema's state, version 0 before the first
// migration.
func readSchema(ctx context.Context, pool *pgxpool.Pool) (schemaState, error) {
	var st schemaState
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('agentmap.schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return st, fmt.Errorf("read schema version: %w", withHint(safeErr(err)))
	}
	if !exists {
		return st, nil
	}
	if err := pool.QueryRow(ctx, versionQuery, SchemaVersion()).Scan(&st.version, &st.newerFloor); err != nil {
		return st, fmt.Errorf("read schema version: %w", withHint(safeErr(err)))
	}
	return st, nil
}

// withHint adds what to do to a refusal for want of a privilege
// (insufficient_privilege): a role that connects before the schema was
// made, or without the grants.
func withHint(err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Code == "42501" {
		return fmt.Errorf("%w; %s", err, ownerHint())
	}
	return err
}
