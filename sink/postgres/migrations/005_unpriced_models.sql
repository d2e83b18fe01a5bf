-- A cost of $0 is not a session that cost nothing when its models have no
-- price: `agentmap usage` and the report show such a cost as "unpriced",
-- and so must the team's views. cost_usd stays the cost of the priced
-- requests; unpriced_models names the models whose tokens have no price
-- (the map's UnpricedModels, "unknown" for requests that name no model),
-- empty when every request was priced.

-- Every DDL below waits for the locks of the table and views it changes at
-- most this long, as migration 3's do.
SET LOCAL lock_timeout = '10s';

-- NULL where it is not known: a row an agentmap before this schema wrote
-- after this migration (it does not know the column). The price table is
-- the sending machine's, so the writer fills the column, not the server.
ALTER TABLE agentmap.sessions ADD COLUMN unpriced_models text[];

-- The rows already here: the models whose requests used tokens and none
-- of which has a cost, read from each map. The writer also leaves out a
-- priced model whose every request was too small to cost a millionth of a
-- dollar, which the server cannot tell from an unpriced one: `agentmap
-- sink resend` on a machine writes its sessions' lists as the writer
-- makes them.
UPDATE agentmap.sessions s SET unpriced_models = coalesce((
    SELECT array_agg(u.model ORDER BY u.first)
    FROM (SELECT coalesce(nullif(e ->> 'model', ''), 'unknown') AS model, min(t.i) AS first
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s.map -> 'events') = 'array'
                                         THEN s.map -> 'events' ELSE '[]'::jsonb END) WITH ORDINALITY AS t(e, i)
          WHERE e ->> 'kind' = 'llm'
          GROUP BY 1
          HAVING bool_and(coalesce((e ->> 'cost')::numeric, 0) <= 0)
             AND bool_or(coalesce((e ->> 'in')::numeric, 0) + coalesce((e ->> 'cw')::numeric, 0)
                       + coalesce((e ->> 'cr')::numeric, 0) + coalesce((e ->> 'out')::numeric, 0) > 0)) u),
    '{}');

-- The same views with the new column (appended: CREATE OR REPLACE keeps
-- the columns they had).
CREATE OR REPLACE VIEW agentmap.latest_sessions AS
SELECT s.*
FROM agentmap.sessions s
WHERE NOT EXISTS (
    SELECT 1 FROM agentmap.sessions n
    WHERE n.session_id = s.session_id
      AND (n.flushed_at, n.received_at, n.id) > (s.flushed_at, s.received_at, s.id));

CREATE OR REPLACE VIEW agentmap.counted_sessions AS
SELECT s.*
FROM agentmap.latest_sessions s
WHERE NOT EXISTS (SELECT 1 FROM agentmap.sessions p
                  WHERE p.session_id = s.parent_session_id
                    AND p.map -> 'agents' @> jsonb_build_array(jsonb_build_object('id', s.lane_in_parent)));

-- unpriced_sessions: how many of the sessions counted have tokens of a
-- model with no price, whose cost cost_usd leaves out. A week with
-- unpriced sessions costs more than cost_usd says.
CREATE OR REPLACE VIEW agentmap.cost_per_repo_week AS
SELECT coalesce(repo, '') AS repo,
       (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week,
       count(*) AS sessions,
       sum(cost_usd) AS cost_usd,
       sum(tokens) AS tokens,
       sum(duration_ms) AS duration_ms,
       count(*) FILTER (WHERE cardinality(unpriced_models) > 0) AS unpriced_sessions
FROM agentmap.counted_sessions
GROUP BY 1, 2;
