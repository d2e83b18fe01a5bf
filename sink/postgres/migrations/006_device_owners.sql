-- Each machine writes only its own rows. A device belongs to the role that
-- sent it first (owner_role); a role that writes rows (the machines')
-- writes, and sees, only the sessions, events and files of its own
-- devices, so that one machine's credentials cannot change or remove
-- another's sessions. Where every machine connects as one role, every
-- device is that role's, as before; with a login role per machine
-- (docs/team-database.md), each has its own. A role that may read the maps
-- (the reporting role) sees every row; the owner of the tables, and a
-- superuser, are not held by any of it. What a machine's role may read is
-- the grants file's: the keys its upsert needs, never a map.

-- Every DDL below waits for the locks of the tables it changes at most
-- this long, as migration 3's do.
SET LOCAL lock_timeout = '10s';

-- NULL for the devices that sent before this migration: which role sent
-- them is not known, so every writing role may write their rows, as every
-- role could before, until the owner gives each its role (UPDATE
-- agentmap.devices SET owner_role = ...). The default is set apart from
-- the column so that the rows already here do not get the migrating role.
ALTER TABLE agentmap.devices ADD COLUMN owner_role text;
ALTER TABLE agentmap.devices ALTER COLUMN owner_role SET DEFAULT current_user;

-- The policies of the devices and the sessions. A role sees every row
-- when it may read the maps (a reporting role); the machines' role may
-- not (the grants file), and sees its own devices' rows only. That test
-- is a scalar subquery, read once per query, not once per row. A device
-- of no role (sent before this migration) is every writing role's.
ALTER TABLE agentmap.devices ENABLE ROW LEVEL SECURITY;

CREATE POLICY read_own_or_all ON agentmap.devices FOR SELECT
    USING ((SELECT has_column_privilege('agentmap.sessions', 'map', 'SELECT'))
           OR owner_role = current_user OR owner_role IS NULL);
CREATE POLICY insert_own ON agentmap.devices FOR INSERT
    WITH CHECK (owner_role = current_user);
CREATE POLICY update_own ON agentmap.devices FOR UPDATE
    USING (owner_role = current_user OR owner_role IS NULL);

ALTER TABLE agentmap.sessions ENABLE ROW LEVEL SECURITY;

CREATE POLICY read_own_or_all ON agentmap.sessions FOR SELECT
    USING ((SELECT has_column_privilege('agentmap.sessions', 'map', 'SELECT'))
           OR device_id IN (SELECT d.device_id FROM agentmap.devices d
                            WHERE d.owner_role = current_user OR d.owner_role IS NULL));
CREATE POLICY insert_own ON agentmap.sessions FOR INSERT
    WITH CHECK (device_id IN (SELECT d.device_id FROM agentmap.devices d
                              WHERE d.owner_role = current_user OR d.owner_role IS NULL));
CREATE POLICY update_own ON agentmap.sessions FOR UPDATE
    USING (device_id IN (SELECT d.device_id FROM agentmap.devices d
                         WHERE d.owner_role = current_user OR d.owner_role IS NULL));
CREATE POLICY delete_own ON agentmap.sessions FOR DELETE
    USING (device_id IN (SELECT d.device_id FROM agentmap.devices d
                         WHERE d.owner_role = current_user OR d.owner_role IS NULL));

-- Events and files are written with COPY, which PostgreSQL refuses on a
-- table with row-level security: they are held by triggers instead.
--
-- A new map of a session replaces its events and files: the update of the
-- session's row removes them, as the table's owner, so that a machine's
-- role needs no DELETE on them (RLS lets it update its own sessions only).
-- A writer before this schema deletes them itself, finding none.
CREATE FUNCTION agentmap.replace_rows_of_session() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM agentmap.events WHERE session = NEW.id;
    DELETE FROM agentmap.files WHERE session = NEW.id;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION agentmap.replace_rows_of_session() FROM PUBLIC;
CREATE TRIGGER replace_rows AFTER UPDATE OF map ON agentmap.sessions
    FOR EACH ROW EXECUTE FUNCTION agentmap.replace_rows_of_session();

-- An event or a file goes only into a session of the writing role's own
-- devices. Checked once per statement (a COPY of a whole batch), as the
-- role that writes, for the roles row-level security holds.
CREATE FUNCTION agentmap.check_rows_of_own_sessions() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    own bigint;
BEGIN
    IF NOT row_security_active('agentmap.sessions') THEN
        RETURN NULL;
    END IF;
    -- The sessions written, looked up by id (the primary key): a join of
    -- the rows written with the sessions would scan the table, through
    -- the policies, at every push.
    SELECT array_agg(DISTINCT session) INTO ids FROM written;
    SELECT count(*) INTO own FROM agentmap.sessions s
    WHERE s.id = ANY(ids)
      AND s.device_id IN (SELECT d.device_id FROM agentmap.devices d
                          WHERE d.owner_role = current_user OR d.owner_role IS NULL);
    IF own < coalesce(cardinality(ids), 0) THEN
        RAISE EXCEPTION 'rows for a session of a device this role does not own, in agentmap.%', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER own_sessions_only AFTER INSERT ON agentmap.events
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION agentmap.check_rows_of_own_sessions();
CREATE TRIGGER own_sessions_only AFTER INSERT ON agentmap.files
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION agentmap.check_rows_of_own_sessions();
