import type { Migration } from '../store/migration.js'

/**
 * The fleet's versioned config. A version is never changed nor deleted (a trigger refuses both): a rollback is a
 * new version whose text is an old one's. `text` is the YAML exactly as pushed, `${ENV}` references included (each
 * instance resolves them; a resolved secret is never stored). Instances report here (one row per serving process:
 * a single process is worker 0). Times are milliseconds since the epoch.
 */
export const configStoreMigrations: readonly Migration[] = [
  {
    id: 'config-store-0001-versions',
    sql: `
      CREATE TABLE IF NOT EXISTS lanegate_config_versions (
        version     INTEGER PRIMARY KEY CHECK (version > 0),
        parent      INTEGER REFERENCES lanegate_config_versions (version),
        text        TEXT NOT NULL,
        sha256      TEXT NOT NULL,
        author      TEXT NOT NULL,
        message     TEXT NOT NULL,
        rollback_of INTEGER REFERENCES lanegate_config_versions (version),
        created_at  BIGINT NOT NULL
      );
      CREATE OR REPLACE FUNCTION lanegate_config_versions_immutable () RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'lanegate config versions are immutable: push a new version instead'; END
      $$;
      DROP TRIGGER IF EXISTS lanegate_config_versions_immutable ON lanegate_config_versions;
      CREATE TRIGGER lanegate_config_versions_immutable BEFORE UPDATE OR DELETE ON lanegate_config_versions
        FOR EACH ROW EXECUTE FUNCTION lanegate_config_versions_immutable();
      CREATE TABLE IF NOT EXISTS lanegate_config_instances (
        instance_id     TEXT NOT NULL,
        worker          INTEGER NOT NULL,
        host            TEXT NOT NULL,
        pid             INTEGER NOT NULL,
        started_at      BIGINT NOT NULL,
        heartbeat_at    BIGINT NOT NULL,
        applied_version INTEGER,
        applied_sha256  TEXT,
        applied_at      BIGINT,
        refused_version INTEGER,
        refused_reason  TEXT,
        refused_at      BIGINT,
        PRIMARY KEY (instance_id, worker)
      );
    `,
  },
]
