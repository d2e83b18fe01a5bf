-- Test and build commands are shell verbs too. The builder gives a command
-- it recognises as a test, a build, a lint or a type check (`go test`,
-- `pytest`, `npm test`, `cargo build`, …) the kind verify, and every other
-- command the kind exec; both carry their verb. failing_verbs counted exec events alone,
-- so the commands that fail most often were never in it, while the
-- report's "Shell verbs that fail or are retried" counts both. It now
-- counts the report's shell commands: events of kind exec or verify that
-- have a verb (report/data.go, sessionAgg), with the retries the report
-- counts beside the failures (an event with retry_of set is a retry of
-- an earlier call).

-- Replacing the view waits for the reports reading it at most this long,
-- as migration 3's DDL does.
SET LOCAL lock_timeout = '10s';

-- The same columns (CREATE OR REPLACE keeps them: verb is text, as the
-- coalesce made it), and retries appended. A command with no verb (none
-- the builder could name) is left out, as the report leaves it out.
CREATE OR REPLACE VIEW agentmap.failing_verbs AS
SELECT e.verb AS verb,
       count(*) AS calls,
       count(*) FILTER (WHERE e.err) AS failures,
       round(count(*) FILTER (WHERE e.err)::numeric / count(*), 4) AS failure_rate,
       count(DISTINCT e.session) AS sessions,
       count(*) FILTER (WHERE e.retry_of IS NOT NULL) AS retries
FROM agentmap.events e JOIN agentmap.counted_sessions s ON s.id = e.session
WHERE e.kind IN ('exec', 'verify') AND e.verb <> ''
GROUP BY 1;
