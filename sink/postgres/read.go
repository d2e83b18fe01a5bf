package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

// ReadPool is Read on an open pool.
func ReadPool(ctx context.Context, pool *pgxpool.Pool, f Filter, fn func(Stored) error) error {
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
	q := `SELECT s.device_id::text, d.label, s.map::text, s.flushed_at, s.received_at
		FROM agentmap.sessions s JOIN agentmap.devices d USING (device_id)
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY s.started_at NULLS FIRST, s.device_id, s.session_id`
	rows, err := pool.Query(ctx, q, args...)
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

// readHint adds what a reporting role needs to a refusal for want of a
// privilege.
func readHint(err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Code == "42501" {
		return fmt.Errorf("%w; a reporting role needs USAGE on the schema agentmap and SELECT on its tables and views (docs/team-database-grants.sql)", err)
	}
	return err
}

// Open connects to the team database (a postgres:// URL or a libpq
// key=value string; PGPASSWORD and ~/.pgpass apply as in libpq) and checks
// that it answers.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error can quote the URL, password included.
		return nil, fmt.Errorf("the team database URL does not parse")
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.ConnectTimeout = 15 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the team database: %w", safeErr(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to the team database: %w", safeErr(err))
	}
	return pool, nil
}
