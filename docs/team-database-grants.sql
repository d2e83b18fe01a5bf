-- The privileges of the roles that connect to the team database. Run as
-- the owner of the schema agentmap once it exists and is migrated (after
-- `agentmap sink migrate`, or the first daemon that connects as the
-- owner), with agentmap_sink and agentmap_reader replaced by the roles'
-- names. Running it again is harmless, and takes back from agentmap_sink
-- what an earlier version of this file gave it beyond what follows.

-- agentmap_sink: what the machines may do. The role every machine connects
-- as, or a role without login whose members are one login role per
-- machine (docs/team-database.md): row-level security then keeps each to
-- the rows of its own devices.
REVOKE ALL ON agentmap.schema_migrations, agentmap.devices, agentmap.sessions, agentmap.events, agentmap.files FROM agentmap_sink;
GRANT USAGE ON SCHEMA agentmap TO agentmap_sink;
-- The schema's version, read in every push.
GRANT SELECT ON agentmap.schema_migrations TO agentmap_sink;
-- The machine's row: upserted with its label and the agentmap version.
-- owner_role (the role that sent the device first) is the server's to
-- set, and the row-level policies read it as the role that writes.
GRANT SELECT (device_id, owner_role), INSERT (device_id, label, producer), UPDATE (label, producer, last_seen)
    ON agentmap.devices TO agentmap_sink;
-- Sessions are upserted: INSERT, UPDATE, and SELECT of what the upsert's
-- guard reads (the row's id and key, the content hash, the flush and
-- arrival times), never a map or a summary.
GRANT SELECT (id, device_id, session_id, content_hash, flushed_at, received_at), INSERT, UPDATE
    ON agentmap.sessions TO agentmap_sink;
-- A session that privacy.exclude covers after it was sent is removed by
-- the device that sent it (its events and files go with it, ON DELETE
-- CASCADE).
GRANT DELETE ON agentmap.sessions TO agentmap_sink;
-- A new version's events and files (the update of the session's row
-- removed the old version's).
GRANT INSERT ON agentmap.events, agentmap.files TO agentmap_sink;

-- agentmap_reader: what `agentmap report --from` and `agentmap usage
-- --from` (and anyone querying the views) connect as. It reads every table
-- and view of the schema and writes nothing; USAGE on the schema is needed
-- to reach them at all. A role that may read the maps sees every device's
-- rows.
GRANT USAGE ON SCHEMA agentmap TO agentmap_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA agentmap TO agentmap_reader;
-- Tables and views a later migration (run by this owner) creates.
ALTER DEFAULT PRIVILEGES IN SCHEMA agentmap GRANT SELECT ON TABLES TO agentmap_reader;
