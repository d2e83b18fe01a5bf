-- The privileges of the role every agentmap daemon connects to the team
-- database as. Run as the owner of the schema agentmap once it exists
-- (after the first daemon, or `agentmap sink migrate`, created it), with
-- agentmap_sink replaced by the role's name.
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
