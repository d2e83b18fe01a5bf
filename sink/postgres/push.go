package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmap/agentmap/docs"
	"github.com/agentmap/agentmap/export/mapfile"
)

// Device is the machine a batch comes from.
type Device struct {
	ID       string // a UUID, kept in the state database
	Label    string // the config's device label ("" when unset)
	Producer string // the agentmap version that sends
}

// Upload is one session's map as it goes to the team database.
type Upload struct {
	Doc       *mapfile.Doc
	FlushedAt time.Time // when the device wrote this version
}

// PushResult counts what a batch did in the database.
type PushResult struct {
	// Stored is the sessions inserted or replaced by a new version;
	// Unchanged those the database already held in this content (a
	// duplicate send, or a resend) or in a newer version.
	Stored, Unchanged int
	// Rewritten is the part of Unchanged held in this very content and
	// version, whose rows were written again all the same: what `agentmap
	// sink resend` is for, a database whose rows were lost or damaged.
	Rewritten int
}

// upsertSession is the statement that stores a session's row. The guard:
// a version older than the one held (a late duplicate of an earlier send)
// never replaces it; the same version again is written again, content and
// all, so that a resend repairs a row whose events or files were lost
// (received_at stays the first arrival of that content). It returns the
// row's id and whether the row held this content before. Into a schema of
// 5 or later it also writes unpriced_models ($31).
//
// The new values are the parameters, not EXCLUDED: reading a column of
// EXCLUDED needs SELECT on it, and the machines' role may read only what
// the guard reads (the id, the key, the content hash and the two times;
// docs/team-database-grants.sql), never a map.
func upsertSession(unpriced bool) string {
	cols, vals, set := "", "", ""
	if unpriced {
		cols, vals, set = ", unpriced_models", ", $31", ", unpriced_models = $31"
	}
	return `
WITH held AS (SELECT content_hash FROM agentmap.sessions WHERE device_id = $1 AND session_id = $2)
INSERT INTO agentmap.sessions AS s (device_id, session_id, agent, repo, remote, repos, started_at, duration_ms,
	models, tokens, input_tokens, cache_write_tokens, cache_read_tokens, output_tokens, cost_usd, outcome,
	calls, requests, errors, user_turns, subagents, files_touched, commits, prs_created, truncated, path_mode,
	producer, content_hash, flushed_at, received_at, map` + cols + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
	$23, $24, $25, $26, $27, $28, $29, now(), $30` + vals + `)
ON CONFLICT (device_id, session_id) DO UPDATE SET
	agent = $3, repo = $4, remote = $5, repos = $6, started_at = $7, duration_ms = $8, models = $9,
	tokens = $10, input_tokens = $11, cache_write_tokens = $12, cache_read_tokens = $13, output_tokens = $14,
	cost_usd = $15, outcome = $16, calls = $17, requests = $18, errors = $19, user_turns = $20,
	subagents = $21, files_touched = $22, commits = $23, prs_created = $24, truncated = $25,
	path_mode = $26, producer = $27, content_hash = $28, flushed_at = $29, map = $30` + set + `,
	received_at = CASE WHEN s.content_hash = $28 THEN s.received_at ELSE now() END
WHERE s.flushed_at <= $29
RETURNING id, coalesce((SELECT h.content_hash = $28 FROM held h), false)`
}

// Schemas from which the server does part of a writer's work.
const (
	// unpricedSchema is the first schema with sessions.unpriced_models.
	unpricedSchema = 5
	// replacingSchema is the first schema whose sessions replace their
	// events and files themselves when their map is updated (a trigger, as
	// the table's owner): a writer there deletes none, and the machines'
	// role needs no DELETE on them.
	replacingSchema = 6
)

// Push stores one batch of maps in one transaction: the device, each
// session's row (upserted under the guard) and, for the sessions stored or
// written again, their events and files, replacing what was there. Sending
// the same batch twice, or a batch cut by a crash or a timeout and sent
// again, leaves the database as one send does. A session id twice in the
// batch is stored once, as its last upload (the others count as
// unchanged): two upserts of one row in one transaction would write its
// events twice. The transaction first checks the schema's version
// (checkVersion): a schema migrated since the pool was opened by a newer
// agentmap that this build cannot write into is refused, not written.
func Push(ctx context.Context, pool *pgxpool.Pool, dev Device, ups []Upload) (PushResult, error) {
	var res PushResult
	if len(ups) == 0 {
		return res, nil
	}
	ups, dropped := lastOfEachSession(ups)
	rows := make([]sessionRow, len(ups))
	for i, u := range ups {
		rows[i] = rowOf(u.Doc.Map)
	}
	err := inTx(ctx, pool, "push", func(tx pgx.Tx) error {
		res = PushResult{Unchanged: dropped}
		v, err := checkVersion(ctx, tx)
		if err != nil {
			return err
		}
		// The parameters, not EXCLUDED (upsertSession says why).
		if _, err := tx.Exec(ctx, `INSERT INTO agentmap.devices (device_id, label, producer) VALUES ($1, $2, $3)
			ON CONFLICT (device_id) DO UPDATE SET label = $2, producer = $3, last_seen = now()`,
			dev.ID, dev.Label, dev.Producer); err != nil {
			return fmt.Errorf("store device: %w", pushHint(safeErr(err)))
		}
		b := &pgx.Batch{}
		upsert := upsertSession(v >= unpricedSchema)
		for i, u := range ups {
			r := rows[i]
			args := []any{dev.ID, r.sessionID, r.agent, r.repo, r.remote, r.repos, r.startedAt, r.durationMs,
				r.models, r.tokens, r.in, r.cw, r.cr, r.out, r.cost, r.outcome, r.calls, r.requests, r.errors,
				r.userTurns, r.subagents, r.filesTouched, r.commits, r.prs, r.truncated, r.pathMode, r.producer,
				r.contentHash, u.FlushedAt.UTC(), string(u.Doc.Canonical)}
			if v >= unpricedSchema {
				args = append(args, r.unpriced)
			}
			b.Queue(upsert, args...)
		}
		br := tx.SendBatch(ctx, b)
		var stored []int64
		var storedRows []*sessionRow
		for i := range ups {
			var id int64
			var held bool
			err := br.QueryRow().Scan(&id, &held)
			switch {
			case err == pgx.ErrNoRows:
				res.Unchanged++
				continue
			case err != nil:
				br.Close()
				return fmt.Errorf("store session: %w", pushHint(safeErr(err)))
			case held:
				res.Unchanged++
				res.Rewritten++
			default:
				res.Stored++
			}
			stored = append(stored, id)
			storedRows = append(storedRows, &rows[i])
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("store sessions: %w", pushHint(safeErr(err)))
		}
		if len(stored) == 0 {
			return nil
		}
		// The events and files held go (a replaced version's, or the same
		// version's, written again); an inserted session has none. From
		// replacingSchema on, the update of the session's row removed them.
		if v < replacingSchema {
			if _, err := tx.Exec(ctx, "DELETE FROM agentmap.events WHERE session = ANY($1)", stored); err != nil {
				return fmt.Errorf("replace events: %w", withHint(safeErr(err)))
			}
			if _, err := tx.Exec(ctx, "DELETE FROM agentmap.files WHERE session = ANY($1)", stored); err != nil {
				return fmt.Errorf("replace files: %w", withHint(safeErr(err)))
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"agentmap", "events"}, eventColumns,
			&eventSource{ids: stored, rows: storedRows, i: 0, j: -1}); err != nil {
			return fmt.Errorf("store events: %w", pushHint(safeErr(err)))
		}
		var files [][]any
		for k, r := range storedRows {
			for _, f := range r.files {
				files = append(files, []any{stored[k], f.ID, nullable(f.Repo), f.Path, f.Reads, f.Edits, nullable(f.Op)})
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"agentmap", "files"}, fileColumns, pgx.CopyFromRows(files)); err != nil {
			return fmt.Errorf("store files: %w", pushHint(safeErr(err)))
		}
		return nil
	})
	if err != nil {
		return PushResult{}, err
	}
	return res, nil
}

// lastOfEachSession keeps, of each session id, the upload flushed last
// (the later one in the batch when two were flushed at once), in the
// batch's order, and says how many it left out.
func lastOfEachSession(ups []Upload) ([]Upload, int) {
	last := make(map[string]int, len(ups))
	for i, u := range ups {
		id := u.Doc.Map.Session.ID
		if j, ok := last[id]; ok && ups[j].FlushedAt.After(u.FlushedAt) {
			continue
		}
		last[id] = i
	}
	if len(last) == len(ups) {
		return ups, 0
	}
	out := make([]Upload, 0, len(last))
	for i, u := range ups {
		if last[u.Doc.Map.Session.ID] == i {
			out = append(out, u)
		}
	}
	return out, len(ups) - len(out)
}

// Retract deletes the rows a device stored of sessions that left agentmap
// (privacy.exclude now covers them), by the session ids their maps were
// stored under, in one statement; their events and files go with them (ON
// DELETE CASCADE). A session with no row (never stored, or retracted
// before) deletes nothing. It returns how many sessions' rows went. Like
// Push it checks the schema's version first. A role without DELETE on the sessions gets an error wrapping
// ErrRetractRefused, which names the grant.
func Retract(ctx context.Context, pool *pgxpool.Pool, deviceID string, sessionIDs []string) (int64, error) {
	var tag pgconn.CommandTag
	err := inTx(ctx, pool, "remove sessions privacy.exclude now covers", func(tx pgx.Tx) error {
		if _, err := checkVersion(ctx, tx); err != nil {
			return err
		}
		var err error
		tag, err = tx.Exec(ctx, "DELETE FROM agentmap.sessions WHERE device_id = $1 AND session_id = ANY($2::text[])",
			deviceID, nonNilStrings(sessionIDs))
		if err == nil {
			return nil
		}
		err = safeErr(err)
		var se *ServerError
		if errors.As(err, &se) && se.Code == "42501" /* insufficient_privilege */ {
			return fmt.Errorf("remove sessions privacy.exclude now covers: %w; grant DELETE ON agentmap.sessions to this role (`agentmap sink grants` prints the grants): %w", ErrRetractRefused, err)
		}
		return fmt.Errorf("remove sessions privacy.exclude now covers: %w", err)
	})
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// ErrRetractRefused is the database refusing a retraction for want of a
// privilege: the maps still go, and the retraction waits for the grant.
var ErrRetractRefused = errors.New("refused")

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var eventColumns = []string{"session", "seq", "t", "kind", "lane", "tool", "verb", "server", "model", "err", "err_class",
	"exit_code", "retry_of", "dur", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "cost_usd"}

var fileColumns = []string{"session", "file_id", "repo", "path", "reads", "edits", "op"}

// eventSource streams the events of the stored sessions into COPY without
// building every row first.
type eventSource struct {
	ids  []int64
	rows []*sessionRow
	i, j int
}

func (s *eventSource) Next() bool {
	for s.i < len(s.rows) {
		s.j++
		if s.j < len(s.rows[s.i].events) {
			return true
		}
		s.i, s.j = s.i+1, -1
	}
	return false
}

func (s *eventSource) Values() ([]any, error) {
	e := &s.rows[s.i].events[s.j]
	return []any{s.ids[s.i], e.Seq, e.T, e.Kind, e.Lane(), nullable(e.Tool), nullable(e.Verb), nullable(e.Server),
		nullable(e.Model), e.Err, nullable(e.ErrClass), e.ExitCode, e.RetryOf, e.Dur, e.In, e.CW, e.CR, e.Out, e.Cost}, nil
}

func (s *eventSource) Err() error { return nil }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pushHint adds what to do to a push's refusal. A row of a device another
// role owns (row-level security, or the trigger that holds events and files
// to their own sessions) is refused as a missing privilege is (42501), but
// no grant lets it through: the device was first sent as another role.
func pushHint(err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Code == "42501" &&
		(strings.Contains(se.Message, "row-level security") || strings.Contains(se.Message, "does not own")) {
		return fmt.Errorf("%w; %s", err, notOwnerHint())
	}
	return withHint(err)
}

// notOwnerHint names the setup where it is on this machine (docs.Path).
func notOwnerHint() string {
	return "this device's rows in the team database belong to another role (agentmap.devices.owner_role), " +
		"and each machine's role writes only the devices it sent first: if this machine now connects as another role, " +
		"the schema's owner gives it its device (" + docs.Path(docs.TeamDatabase) + ", \"A login role per machine\")"
}
