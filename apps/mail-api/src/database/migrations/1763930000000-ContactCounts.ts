import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The number of contacts of each project, maintained by Postgres itself, so `GET /contacts` answers
 * its exact `total` without counting the project's contacts on every page (a count over the whole
 * table was most of the endpoint's cost, issue #18).
 *
 * Triggers, not application code: contacts are created by several writers (the contacts API, send's
 * recipients, segment members, and /v1/track's one-statement upsert) and deleted one by one or by the
 * cascade of a project's deletion; statement-level triggers see all of them, in the writer's own
 * transaction, so a snapshot that sees a contact also sees it counted. One statement adds or removes
 * its rows at once (transition tables), one counter update per statement and project.
 *
 * Sharded: a single counter row per project would serialise every transaction that creates a contact
 * in that project (the row stays locked until commit). Each database connection adds to its own shard
 * (its backend pid modulo 16), so concurrent writers on other connections never wait for one another,
 * and a connection never holds two shards of one project (no lock-order cycle); the total is the sum
 * of the project's shards. A shard may go negative (deletes counted on another connection's shard).
 */
export class ContactCounts1763930000000 implements MigrationInterface {
  name = 'ContactCounts1763930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contact_counts (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        shard smallint NOT NULL,
        contacts bigint NOT NULL,
        PRIMARY KEY (project_id, shard)
      )`);
    await q.query(`
      CREATE FUNCTION contact_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contact_counts (project_id, shard, contacts)
        SELECT project_id, pg_backend_pid() % 16, count(*) FROM added_contacts GROUP BY project_id ORDER BY project_id
        ON CONFLICT (project_id, shard) DO UPDATE SET contacts = contact_counts.contacts + EXCLUDED.contacts;
        RETURN NULL;
      END $$`);
    // A project's own deletion cascades to its contacts and its counters: nothing to count then (and
    // its counter rows could not be written: the project is gone).
    await q.query(`
      CREATE FUNCTION contact_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contact_counts (project_id, shard, contacts)
        SELECT r.project_id, pg_backend_pid() % 16, -count(*) FROM removed_contacts r
         WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = r.project_id)
         GROUP BY r.project_id ORDER BY r.project_id
        ON CONFLICT (project_id, shard) DO UPDATE SET contacts = contact_counts.contacts + EXCLUDED.contacts;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION contact_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM contact_counts;
        RETURN NULL;
      END $$`);
    // No contact may be written between the backfill and the triggers.
    await q.query(`LOCK TABLE contacts IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`
      CREATE TRIGGER contacts_counted_on_insert AFTER INSERT ON contacts
        REFERENCING NEW TABLE AS added_contacts FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_add()`);
    await q.query(`
      CREATE TRIGGER contacts_counted_on_delete AFTER DELETE ON contacts
        REFERENCING OLD TABLE AS removed_contacts FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_remove()`);
    await q.query(`
      CREATE TRIGGER contacts_counted_on_truncate AFTER TRUNCATE ON contacts
        FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_clear()`);
    await q.query(
      `INSERT INTO contact_counts (project_id, shard, contacts) SELECT project_id, 0, count(*) FROM contacts GROUP BY project_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER contacts_counted_on_truncate ON contacts`);
    await q.query(`DROP TRIGGER contacts_counted_on_delete ON contacts`);
    await q.query(`DROP TRIGGER contacts_counted_on_insert ON contacts`);
    await q.query(`DROP FUNCTION contact_counts_clear()`);
    await q.query(`DROP FUNCTION contact_counts_remove()`);
    await q.query(`DROP FUNCTION contact_counts_add()`);
    await q.query(`DROP TABLE contact_counts`);
  }
}
