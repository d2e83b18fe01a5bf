-- A spawned agent's work counts once. A Codex subagent has a map of its
-- own (session.role "subagent", session.parentSessionId its parent's
-- session.id) and is also a lane of its parent's map, whose events and
-- totals hold its work: counting both counts its tokens, cost and calls
-- twice. `agentmap usage` and `agentmap report` leave such a map out when
-- its parent's map is among the sessions, and keep it when the parent has
-- none (its parent's log was gone: the child's map is the only record of
-- its work); the views follow the same rule over the team's sessions.

-- Every DDL below waits for the locks of the table and views it changes at
-- most this long, as migration 3's do.
SET LOCAL lock_timeout = '10s';

-- The parent of a subagent session, NULL for every other session. A
-- generated column rather than a reading of the map in the views: the
-- views then never detoast a map (each some kilobytes), and the server
-- fills it for whatever build writes the row, so the writers of schemas
-- 1 to 3 write correct rows into this one. Adding it, and lane_in_parent
-- below, rewrites the table (once each), under the migrations' lock.
ALTER TABLE agentmap.sessions ADD COLUMN parent_session_id text
    GENERATED ALWAYS AS (CASE WHEN map -> 'session' ->> 'role' = 'subagent'
        THEN nullif(map -> 'session' ->> 'parentSessionId', '') END) STORED;

-- The lane a subagent session is in its parent's map: "sa-" and the last
-- 12 letters and digits of its own id, lower-cased (the agents' LaneID).
-- A subagent counts in its parent only when the parent's map has that
-- lane: a Cursor sub-composer is a session of its own and no lane.
ALTER TABLE agentmap.sessions ADD COLUMN lane_in_parent text
    GENERATED ALWAYS AS (CASE WHEN map -> 'session' ->> 'role' = 'subagent'
        THEN 'sa-' || right(regexp_replace(lower(regexp_replace(map -> 'session' ->> 'id', '^local:[^:]*:', '')),
                                           '[^0-9a-z]', '', 'g'), 12) END) STORED;

-- The same view with the new column (appended: CREATE OR REPLACE keeps
-- the columns it had).
CREATE OR REPLACE VIEW agentmap.latest_sessions AS
SELECT s.*
FROM agentmap.sessions s
WHERE NOT EXISTS (
    SELECT 1 FROM agentmap.sessions n
    WHERE n.session_id = s.session_id
      AND (n.flushed_at, n.received_at, n.id) > (s.flushed_at, s.received_at, s.id));

-- The sessions that count: each session id once, in its latest version,
-- without the subagent sessions whose parent is in the database with a
-- lane of them, sent by any device (a session id has a row in latest_sessions exactly when it
-- has one in sessions, so the lookup reads the table). A session that is
-- not a subagent has no parent_session_id, which equals nothing, and
-- always counts. A plain NOT EXISTS, not "IS NULL OR NOT EXISTS": that
-- one is a hashed subplan, which keeps the views' scans from running in
-- parallel (2-4 times slower over 100,000 sessions); this one is an
-- anti-join like latest_sessions' own.
CREATE VIEW agentmap.counted_sessions AS
SELECT s.*
FROM agentmap.latest_sessions s
WHERE NOT EXISTS (SELECT 1 FROM agentmap.sessions p
                  WHERE p.session_id = s.parent_session_id
                    AND p.map -> 'agents' @> jsonb_build_array(jsonb_build_object('id', s.lane_in_parent)));

CREATE OR REPLACE VIEW agentmap.cost_per_repo_week AS
SELECT coalesce(repo, '') AS repo,
       (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week,
       count(*) AS sessions,
       sum(cost_usd) AS cost_usd,
       sum(tokens) AS tokens,
       sum(duration_ms) AS duration_ms
FROM agentmap.counted_sessions
GROUP BY 1, 2;

CREATE OR REPLACE VIEW agentmap.failing_verbs AS
SELECT coalesce(e.verb, '') AS verb,
       count(*) AS calls,
       count(*) FILTER (WHERE e.err) AS failures,
       round(count(*) FILTER (WHERE e.err)::numeric / count(*), 4) AS failure_rate,
       count(DISTINCT e.session) AS sessions
FROM agentmap.events e JOIN agentmap.counted_sessions s ON s.id = e.session
WHERE e.kind = 'exec'
GROUP BY 1;

CREATE OR REPLACE VIEW agentmap.mcp_failure_rates AS
SELECT coalesce(e.server, '') AS server,
       coalesce(e.tool, '') AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE e.err) AS failures,
       count(*) FILTER (WHERE e.err_class = 'timeout') AS timeouts,
       round(count(*) FILTER (WHERE e.err)::numeric / count(*), 4) AS failure_rate
FROM agentmap.events e JOIN agentmap.counted_sessions s ON s.id = e.session
WHERE e.kind = 'mcp'
GROUP BY 1, 2;

CREATE OR REPLACE VIEW agentmap.outcomes_per_agent AS
SELECT agent,
       outcome,
       count(*) AS sessions,
       round(count(*)::numeric / sum(count(*)) OVER (PARTITION BY agent), 4) AS share
FROM agentmap.counted_sessions
GROUP BY 1, 2;
