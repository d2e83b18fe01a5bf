-- The team database of agentmap: one row per (device, session) holding the
-- latest version of that session's map, its events and its files, all
-- under the schema agentmap. Nothing here holds text: the maps hold none.

CREATE TABLE agentmap.devices (
    device_id  uuid PRIMARY KEY,
    label      text NOT NULL DEFAULT '',
    producer   text NOT NULL DEFAULT '',
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agentmap.sessions (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    device_id          uuid NOT NULL REFERENCES agentmap.devices,
    session_id         text NOT NULL,          -- the map's session.id
    agent              text NOT NULL,          -- session.agentTool
    repo               text,                   -- repos[0].name
    remote             text,                   -- repos[0].remote (host/path)
    repos              text[] NOT NULL DEFAULT '{}',
    started_at         timestamptz,
    duration_ms        bigint NOT NULL DEFAULT 0,
    models             text[] NOT NULL DEFAULT '{}',
    tokens             bigint NOT NULL DEFAULT 0,  -- totals.tokens
    input_tokens       bigint NOT NULL DEFAULT 0,  -- sums of the request events
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cost_usd           double precision NOT NULL DEFAULT 0,
    outcome            text NOT NULL DEFAULT '',
    calls              integer NOT NULL DEFAULT 0,
    requests           integer NOT NULL DEFAULT 0,
    errors             integer NOT NULL DEFAULT 0,
    user_turns         integer NOT NULL DEFAULT 0,
    subagents          integer NOT NULL DEFAULT 0,
    files_touched      integer NOT NULL DEFAULT 0,
    commits            integer NOT NULL DEFAULT 0,
    prs_created        integer NOT NULL DEFAULT 0,
    truncated          boolean NOT NULL DEFAULT false,
    path_mode          text NOT NULL DEFAULT '',
    producer           text NOT NULL DEFAULT '',  -- session.cliVersion
    content_hash       text NOT NULL,             -- the map's contentHash
    flushed_at         timestamptz NOT NULL,      -- when the device wrote this version
    received_at        timestamptz NOT NULL DEFAULT now(),
    map                jsonb NOT NULL,            -- the whole map
    UNIQUE (device_id, session_id)
);

CREATE TABLE agentmap.events (
    session     bigint NOT NULL REFERENCES agentmap.sessions ON DELETE CASCADE,
    seq         integer NOT NULL,
    t           bigint NOT NULL,    -- ms since the session's start
    kind        text NOT NULL,
    lane        text NOT NULL,      -- agent lane, "main" for the main agent
    tool        text,
    verb        text,
    server      text,               -- MCP server
    model       text,
    err         boolean NOT NULL DEFAULT false,
    err_class   text,
    exit_code   integer,
    retry_of    integer,
    dur         bigint,
    input_tokens       bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cost_usd    double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (session, seq)
);

CREATE TABLE agentmap.files (
    session bigint NOT NULL REFERENCES agentmap.sessions ON DELETE CASCADE,
    file_id integer NOT NULL,
    repo    text,
    path    text NOT NULL,   -- in the path mode the device sent
    reads   integer NOT NULL DEFAULT 0,
    edits   integer NOT NULL DEFAULT 0,
    op      text,
    PRIMARY KEY (session, file_id)
);

-- The report's filters and the views' groupings.
CREATE INDEX sessions_started ON agentmap.sessions (started_at);
CREATE INDEX sessions_repo_started ON agentmap.sessions (repo, started_at);
CREATE INDEX sessions_agent_started ON agentmap.sessions (agent, started_at);
CREATE INDEX sessions_device_started ON agentmap.sessions (device_id, started_at);
CREATE INDEX events_exec_verb ON agentmap.events (verb, err) WHERE kind = 'exec';
CREATE INDEX events_mcp_server ON agentmap.events (server, tool, err) WHERE kind = 'mcp';
