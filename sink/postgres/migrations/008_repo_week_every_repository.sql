-- cost_per_repo_week counted each session under its first repository
-- alone (sessions.repo), while the report's table by repository counts a
-- session that worked in several repositories whole in each of them, and
-- a session with none under the empty name (aggregate in
-- report/assets/report.js): the view and the report gave other totals per
-- repository. The view now counts a session in each name of its repos,
-- once in a name two of its repositories share (two checkouts of one
-- project), as the report does, and says how many of each row's sessions
-- also count in another repository, since the rows of a week then sum to
-- more than the week's sessions.

-- Replacing the view waits for the reports reading it at most this long,
-- as migration 3's DDL does.
SET LOCAL lock_timeout = '10s';

-- The same columns (CREATE OR REPLACE keeps them and their types, hence
-- the casts of the sums of counts), and shared_sessions appended: the
-- sessions of the row that also count in another repository's row of the
-- same week. The sessions are summed first by their list of repositories
-- and week, in the parallel scan the view had, and the few sums that makes
-- are then spread over each list's names: a name is taken at its first
-- place in the list (array_position), so a name two repositories share
-- counts once, and repos <@ ARRAY[name] holds when there is no other name.
CREATE OR REPLACE VIEW agentmap.cost_per_repo_week AS
SELECT coalesce(r.repo, '') AS repo,
       w.week,
       sum(w.sessions)::bigint AS sessions,
       sum(w.cost_usd) AS cost_usd,
       sum(w.tokens) AS tokens,
       sum(w.duration_ms) AS duration_ms,
       sum(w.unpriced_sessions)::bigint AS unpriced_sessions,
       coalesce(sum(w.sessions) FILTER (WHERE NOT w.repos <@ ARRAY[r.repo]), 0)::bigint AS shared_sessions
FROM (SELECT repos,
             (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week,
             count(*) AS sessions,
             sum(cost_usd) AS cost_usd,
             sum(tokens) AS tokens,
             sum(duration_ms) AS duration_ms,
             count(*) FILTER (WHERE cardinality(unpriced_models) > 0) AS unpriced_sessions
      FROM agentmap.counted_sessions
      GROUP BY 1, 2) w
CROSS JOIN LATERAL unnest(CASE WHEN cardinality(w.repos) > 0 THEN w.repos ELSE ARRAY['']::text[] END)
    WITH ORDINALITY AS r(repo, i)
WHERE coalesce(array_position(w.repos, r.repo), 1) = r.i
GROUP BY 1, 2;
