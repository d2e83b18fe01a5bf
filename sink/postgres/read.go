package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/sink/connstr"
)

// Filter chooses sessions of the team database. An empty field matches
// every session.
type Filter struct {
	// Devices match a device's id or its label.
	Devices []string
	// Repos match any repository name of a session (repos[].name).
	Repos []string
	// Agents match session.agentTool ("claude-code") or its first word
	// ("claude").
	Agents []string
	// Since keeps sessions started at or after it, Until those started
	// before it.
	Since, Until time.Time
	// ActiveSince keeps sessions that went on until it or later: whose
	// last event (started_at + duration_ms, durationMs being the time from
	// the first event to the last) is at or after it. A usage table counts
	// requests by their own time, and a session started before its
	// --since may hold requests after it; a session with no start is out.
	ActiveSince time.Time
}

// Stored is one session's map as the team database holds it.
type Stored struct {
	DeviceID    string
	DeviceLabel string
	// Map is the whole map's JSON (agentplay/v1), as sent (the database
	// may order keys differently; mapfile.Parse canonicalises it).
	Map        []byte
	FlushedAt  time.Time
	ReceivedAt time.Time
}

// Read calls fn with every session the filter chooses, oldest start
// first, streaming rows so that a large team database is not held in
// memory. It opens its own connection pool from a postgres:// URL.
//
// One session id is one session: where several devices sent the same
// session (a machine whose state was rebuilt has a new device id and sends
// its history again; a log directory synced between two machines), Read
// returns one row of it, the version flushed last (then received last),
// among the devices the filter names. The other filters choose among those
// latest versions.
func Read(ctx context.Context, url string, f Filter, fn func(Stored) error) error {
	pool, err := Open(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	return ReadPool(ctx, pool, f, fn)
}

// UnknownDevicesError is a Filter naming devices the team database has
// none of (a label mistyped): read as it is, the filter would choose no
// session, which is not what was asked. Known are the labels it has, some
// of them at most.
type UnknownDevicesError struct {
	Unknown, Known []string
	// More is how many labels Known leaves out.
	More int
}

func (e *UnknownDevicesError) Error() string {
	q := make([]string, len(e.Unknown))
	for i, d := range e.Unknown {
		q[i] = fmt.Sprintf("%q", d)
	}
	what := "no device " + strings.Join(q, ", ") + " in the team database"
	if len(q) > 1 {
		what = "no devices " + strings.Join(q, ", ") + " in the team database"
	}
	switch {
	case len(e.Known) == 0:
		return what + " (it has no device labels; a device id matches too)"
	case e.More > 0:
		return fmt.Sprintf("%s (its devices: %s and %d more; a device id matches too)", what, strings.Join(e.Known, ", "), e.More)
	}
	return what + " (its devices: " + strings.Join(e.Known, ", ") + "; a device id matches too)"
}

// knownLabels is how many device labels an UnknownDevicesError names.
const knownLabels = 20

// checkDevices fails with an UnknownDevicesError when a device the filter
// names matches no device's id or label.
func checkDevices(ctx context.Context, pool *pgxpool.Pool, devices []string) error {
	var unknown, known []string
	var labels int
	if err := pool.QueryRow(ctx, `SELECT
		coalesce((SELECT array_agg(x ORDER BY n) FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n)
			WHERE NOT EXISTS (SELECT 1 FROM agentmap.devices d WHERE d.device_id::text = x OR d.label = x)), '{}'),
		coalesce((SELECT array_agg(label ORDER BY label) FROM (SELECT DISTINCT label FROM agentmap.devices
			WHERE label <> '' ORDER BY label LIMIT $2) l), '{}'),
		(SELECT count(DISTINCT label) FROM agentmap.devices WHERE label <> '')`, devices, knownLabels).
		Scan(&unknown, &known, &labels); err != nil {
		return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
	}
	if len(unknown) == 0 {
		return nil
	}
	return &UnknownDevicesError{Unknown: unknown, Known: known, More: labels - len(known)}
}

// ReadPool is Read on an open pool. A device the filter names that the
// database has no device of is an error (UnknownDevicesError).
func ReadPool(ctx context.Context, pool *pgxpool.Pool, f Filter, fn func(Stored) error) error {
	if len(f.Devices) > 0 {
		if err := checkDevices(ctx, pool, f.Devices); err != nil {
			return err
		}
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	// A newer row of the same session id (among the devices chosen) hides
	// this one; sessions_session serves the lookup.
	newer := `SELECT 1 FROM agentmap.sessions n WHERE n.session_id = s.session_id
		AND (n.flushed_at, n.received_at, n.id) > (s.flushed_at, s.received_at, s.id)`
	if len(f.Devices) > 0 {
		a := arg(f.Devices)
		where = append(where, "(d.device_id::text = ANY("+a+") OR d.label = ANY("+a+"))")
		newer += " AND n.device_id IN (SELECT device_id FROM agentmap.devices WHERE device_id::text = ANY(" + a + ") OR label = ANY(" + a + "))"
	}
	where = append(where, "NOT EXISTS ("+newer+")")
	if len(f.Repos) > 0 {
		where = append(where, "s.repos && "+arg(f.Repos)+"::text[]")
	}
	if len(f.Agents) > 0 {
		a := arg(f.Agents)
		where = append(where, "(s.agent = ANY("+a+") OR split_part(s.agent, '-', 1) = ANY("+a+"))")
	}
	if !f.Since.IsZero() {
		where = append(where, "s.started_at >= "+arg(f.Since.UTC()))
	}
	if !f.Until.IsZero() {
		where = append(where, "s.started_at < "+arg(f.Until.UTC()))
	}
	if !f.ActiveSince.IsZero() {
		where = append(where, "s.started_at + s.duration_ms * interval '1 millisecond' >= "+arg(f.ActiveSince.UTC()))
	}
	q := `SELECT s.device_id::text, d.label, s.map::text, s.flushed_at, s.received_at
		FROM agentmap.sessions s JOIN agentmap.devices d USING (device_id)
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY s.started_at NULLS FIRST, s.device_id, s.session_id`
	// In a transaction of its own, read-only, whose statements wait at
	// most readLockWait for a lock: a table another session holds locked
	// (a migration, a maintenance ALTER) would otherwise hold the command
	// without a word for as long as that session keeps it.
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", readLockWait.Milliseconds())); err != nil {
		return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
	}
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
	}
	defer rows.Close()
	for rows.Next() {
		var s Stored
		var m string
		if err := rows.Scan(&s.DeviceID, &s.DeviceLabel, &m, &s.FlushedAt, &s.ReceivedAt); err != nil {
			return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
		}
		s.Map = []byte(m)
		if err := fn(s); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the team database: %w", readHint(safeErr(err)))
	}
	return nil
}

// readLockWait bounds a read's wait for a lock another session holds.
var readLockWait = time.Minute

// readHint adds what a reporting role needs to a refusal for want of a
// privilege, and what a lock not granted in time means.
func readHint(err error) error {
	var se *ServerError
	switch {
	case errors.As(err, &se) && se.Code == "42501":
		return fmt.Errorf("%w; a reporting role needs USAGE on the schema agentmap and SELECT on its tables and views (`agentmap sink grants` prints the grants)", err)
	case errors.As(err, &se) && se.Code == "55P03":
		return fmt.Errorf("%w: another session held a table of the team database locked for over %s (a migration, or maintenance); try again once it is done (pg_locks shows who holds it)", err, readLockWait)
	}
	return err
}

// Open connects to the team database (a postgres:// URL or a libpq
// key=value string; PGPASSWORD and ~/.pgpass apply as in libpq) and checks
// that it answers. Its errors quote nothing of the string: one pgx would
// misread is refused first (connstr.Check: white space around it, an @ or
// / not escaped in a URL's password, a key that is not a connection
// keyword), and so is a parameter pgx would send to the server other than
// application_name (the server's refusal of an unknown or malformed one
// quotes it, and a URL pasted after key=value pairs is one); a failure to
// connect is said in words of its own with the database, hosts and user
// the string names (connectFailure), never pgx's text.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if err := connstr.Check(url); err != nil {
		return nil, fmt.Errorf("the team database URL %w", err)
	}
	for _, p := range connstr.Params(url) {
		if !passedOn[p.Key] {
			// A connection keyword (Check refused any other): naming it
			// quotes nothing of the string.
			return nil, fmt.Errorf("the team database URL sets %s, which agentmap does not pass to the server (of the server's settings it sends only application_name): remove it", p.Key)
		}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error can quote the URL, password included: what
		// went wrong is said in words of its own.
		return nil, parseFailure(url, err)
	}
	// pgx's own reading, against the same list: nothing but those reaches
	// the server, whatever connstr made of the string.
	if _, err := pgconn.ParseConfigWithOptions(url, pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowedKeys}); err != nil {
		return nil, errors.New("the team database URL has a parameter agentmap does not pass to the server")
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.ConnectTimeout = 15 * time.Second
	where := "the team database"
	if t := connstr.Target(url); t != "" {
		where += " " + t
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", where, connectFailure(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", where, connectFailure(err))
	}
	return pool, nil
}

// parseFailure says why pgx could not make a configuration of a string
// connstr took, without its text: a file the string names that cannot be
// read (a TLS certificate or key: its path is the user's setting, not a
// secret), an sslmode pgx does not know, a service not in the service file.
func parseFailure(url string, err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("the team database URL names a file that cannot be read: %s: %v", pe.Path, pe.Err)
	}
	for _, p := range connstr.Params(url) {
		if what, ok := numericParams[p.Key]; ok && !numericParam(p.Value, what) {
			return fmt.Errorf("the team database URL's %s is not %s", p.Key, what)
		}
		switch {
		case p.Key == "sslmode" && !slices.Contains([]string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}, p.Value):
			return errors.New("the team database URL's sslmode is none of disable, allow, prefer, require, verify-ca, verify-full")
		case p.Key == "service":
			return errors.New("the team database URL names a service that cannot be read from the service file (PGSERVICEFILE, ~/.pg_service.conf)")
		}
	}
	return errors.New("the team database URL does not parse")
}

// numericParams are the connection string's keys whose value must be a
// number or a duration, with what it must be.
var numericParams = map[string]string{
	"port": "a port number", "connect_timeout": "a whole number of seconds",
	"statement_cache_capacity": "a whole number", "description_cache_capacity": "a whole number",
	"pool_max_conns": "a whole number", "pool_min_conns": "a whole number", "pool_min_idle_conns": "a whole number",
	"pool_max_conn_lifetime": "a duration (such as 1h30m)", "pool_max_conn_idle_time": "a duration (such as 30m)",
	"pool_health_check_period": "a duration (such as 1m)", "pool_max_conn_lifetime_jitter": "a duration (such as 5m)",
	"pool_ping_timeout": "a duration (such as 5s)",
}

// numericParam reports whether v is what a numeric parameter must be: a
// duration where what says so, else digits (a port list of several hosts
// is comma-separated).
func numericParam(v, what string) bool {
	if strings.HasPrefix(what, "a duration") {
		_, err := time.ParseDuration(v)
		return err == nil
	}
	for _, part := range strings.Split(v, ",") {
		if _, err := strconv.Atoi(strings.TrimSpace(part)); err != nil {
			return false
		}
	}
	return true
}

// allowedKeys are the keys a connection string may set: those pgx and
// pgxpool read themselves (pgconn's notRuntimeParams, the statement caches,
// the query mode and the pool's settings; ssl=true is sslmode's alias),
// and of the server's run-time parameters application_name alone. The
// sink names every table with its schema and reads times as timestamptz,
// so it needs no search_path, timezone or options; a run-time parameter is
// checked by the server only, whose refusal quotes its name or value.
var allowedKeys = strings.Fields(`host port dbname user password passfile connect_timeout sslmode sslkey sslcert
	sslcertmode sslrootcert sslnegotiation sslpassword sslsni krbspn krbsrvname target_session_attrs service
	servicefile min_protocol_version max_protocol_version channel_binding require_auth
	statement_cache_capacity description_cache_capacity default_query_exec_mode
	pool_max_conns pool_min_conns pool_min_idle_conns pool_max_conn_lifetime pool_max_conn_idle_time
	pool_health_check_period pool_max_conn_lifetime_jitter pool_ping_timeout
	application_name`)

var passedOn = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range allowedKeys {
		m[k] = true
	}
	return m
}()
