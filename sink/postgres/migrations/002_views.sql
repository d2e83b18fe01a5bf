-- Views for the common questions (docs/team-database.md shows them in use).

-- Cost, tokens and sessions per repository per ISO week (Monday, UTC).
CREATE VIEW agentmap.cost_per_repo_week AS
SELECT coalesce(repo, '') AS repo,
       (date_trunc('week', started_at AT TIME ZONE 'UTC'))::date AS week,
       count(*) AS sessions,
       sum(cost_usd) AS cost_usd,
       sum(tokens) AS tokens,
       sum(duration_ms) AS duration_ms
FROM agentmap.sessions
GROUP BY 1, 2;

-- Shell verbs by how often they fail (exec events; a verb is a command
-- word such as "go test" or "npm", never its arguments).
CREATE VIEW agentmap.failing_verbs AS
SELECT coalesce(verb, '') AS verb,
       count(*) AS calls,
       count(*) FILTER (WHERE err) AS failures,
       round(count(*) FILTER (WHERE err)::numeric / count(*), 4) AS failure_rate,
       count(DISTINCT session) AS sessions
FROM agentmap.events
WHERE kind = 'exec'
GROUP BY 1;

-- MCP tools per server: calls, failures, timeouts and the failure rate.
CREATE VIEW agentmap.mcp_failure_rates AS
SELECT coalesce(server, '') AS server,
       coalesce(tool, '') AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE err) AS failures,
       count(*) FILTER (WHERE err_class = 'timeout') AS timeouts,
       round(count(*) FILTER (WHERE err)::numeric / count(*), 4) AS failure_rate
FROM agentmap.events
WHERE kind = 'mcp'
GROUP BY 1, 2;

-- How sessions end, per agent: counts and shares of each outcome.
CREATE VIEW agentmap.outcomes_per_agent AS
SELECT agent,
       outcome,
       count(*) AS sessions,
       round(count(*)::numeric / sum(count(*)) OVER (PARTITION BY agent), 4) AS share
FROM agentmap.sessions
GROUP BY 1, 2;
