-- One session id is one session. A machine whose state was rebuilt has a
-- new device id and sends its history again, and a log directory synced
-- between two machines sends its sessions from both: the rows of
-- agentmap.sessions stay one per (device, session), and what counts
-- sessions, tokens and cost reads one row per session id, the version
-- flushed last (then received last). `agentmap report --from` and `agentmap
-- usage --from` read the same way (sink/postgres.Read).

-- The index and the views are made under locks that wait for queries
-- reading the tables and views they change, and pushes wait for this
-- migration (the migrations' advisory lock): rather than stall every push
-- behind a long report, the migration gives up after 10 s and
-- `agentmap sink migrate` says to run it again.
SET LOCAL lock_timeout = '10s';

-- The lookup of a session id's newer rows (latest_sessions, Read): the
-- whole comparison in the index.
CREATE INDEX sessions_session ON agentmap.sessions (session_id, flushed_at, received_at, id);

-- The latest version of each session, whichever device sent it.
CREATE VIEW agentmap.latest_sessions AS
SELECT s.*
FROM agentmap.sessions s
WHERE NOT EXISTS (
    SELECT 1 FROM agentmap.sessions n
    WHERE n.session_id = s.session_id
      AND (n.flushed_at, n.received_at, n.id) > (s.flushed_at, s.received_at, s.id));

CREATE OR REPLACE VIEW agentmap.cost_per_repo_week AS
SELECT coalesce(repo, '') AS repo,
       (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week,
       count(*) AS sessions,
       sum(cost_usd) AS cost_usd,
       sum(tokens) AS tokens,
       sum(duration_ms) AS duration_ms
FROM agentmap.latest_sessions
GROUP BY 1, 2;

CREATE OR REPLACE VIEW agentmap.failing_verbs AS
SELECT coalesce(e.verb, '') AS verb,
       count(*) AS calls,
       count(*) FILTER (WHERE e.err) AS failures,
       round(count(*) FILTER (WHERE e.err)::numeric / count(*), 4) AS failure_rate,
       count(DISTINCT e.session) AS sessions
FROM agentmap.events e JOIN agentmap.latest_sessions s ON s.id = e.session
WHERE e.kind = 'exec'
GROUP BY 1;

CREATE OR REPLACE VIEW agentmap.mcp_failure_rates AS
SELECT coalesce(e.server, '') AS server,
       coalesce(e.tool, '') AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE e.err) AS failures,
       count(*) FILTER (WHERE e.err_class = 'timeout') AS timeouts,
       round(count(*) FILTER (WHERE e.err)::numeric / count(*), 4) AS failure_rate
FROM agentmap.events e JOIN agentmap.latest_sessions s ON s.id = e.session
WHERE e.kind = 'mcp'
GROUP BY 1, 2;

CREATE OR REPLACE VIEW agentmap.outcomes_per_agent AS
SELECT agent,
       outcome,
       count(*) AS sessions,
       round(count(*)::numeric / sum(count(*)) OVER (PARTITION BY agent), 4) AS share
FROM agentmap.latest_sessions
GROUP BY 1, 2;
