-- The privileges of the roles that connect to the team database. Run as
-- the owner of the schema agentmap once it exists and is migrated (after
-- `agentmap sink migrate`, or the first daemon that connects as the
-- owner), with agentmap_sink and agentmap_reader replaced by the roles'
-- names. Running it again is harmless.

-- agentmap_sink: what every agentmap daemon connects as.
GRANT USAGE ON SCHEMA agentmap TO agentmap_sink;
GRANT SELECT ON agentmap.schema_migrations TO agentmap_sink;
-- Devices and sessions are upserted: INSERT, UPDATE, and SELECT for the
-- upsert's guard (the content hash and flush time of the row held).
GRANT SELECT, INSERT, UPDATE ON agentmap.devices, agentmap.sessions TO agentmap_sink;
-- A session that privacy.exclude covers after it was sent is removed by
-- the device that sent it (its events and files go with it, ON DELETE
-- CASCADE).
GRANT DELETE ON agentmap.sessions TO agentmap_sink;
-- A new version of a session replaces its events and files.
GRANT SELECT, INSERT, DELETE ON agentmap.events, agentmap.files TO agentmap_sink;

-- agentmap_reader: what `agentmap report --from` and `agentmap usage
-- --from` (and anyone querying the views) connect as. It reads every table
-- and view of the schema and writes nothing; USAGE on the schema is needed
-- to reach them at all.
GRANT USAGE ON SCHEMA agentmap TO agentmap_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA agentmap TO agentmap_reader;
-- Tables and views a later migration (run by this owner) creates.
ALTER DEFAULT PRIVILEGES IN SCHEMA agentmap GRANT SELECT ON TABLES TO agentmap_reader;
