import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contacts and tracked events.
 *
 * Ids are UUIDv7 (time-ordered), made by `uuid_generate_v7()` so set-based inserts get them too: keyset
 * pages by id are then newest-first by creation, and new rows land at the right edge of the indexes.
 */
export class ContactsAndEvents1763800000000 implements MigrationInterface {
  name = 'ContactsAndEvents1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    // 48-bit Unix ms timestamp over a v4 UUID, version bits set to 7 (RFC 9562).
    await q.query(`
      CREATE FUNCTION uuid_generate_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
        SELECT encode(
          set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
            52, 1), 53, 1),
          'hex')::uuid
      $$`);
    await q.query(`
      CREATE TABLE contacts (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        email text NOT NULL,
        subscribed boolean NOT NULL DEFAULT true,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT contacts_data_is_object CHECK (jsonb_typeof(data) = 'object')
      )`);
    // The upsert's conflict target: one contact per email per project, whatever the letter case.
    await q.query(`CREATE UNIQUE INDEX contacts_project_email_uq ON contacts (project_id, lower(email))`);
    // Keyset pages (GET /contacts), led by the tenant.
    await q.query(`CREATE INDEX contacts_project_id_idx ON contacts (project_id, id)`);
    // `search`: case-insensitive substring of the email.
    await q.query(`CREATE INDEX contacts_email_trgm_idx ON contacts USING gin (lower(email) gin_trgm_ops)`);

    await q.query(`
      CREATE TABLE events (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL,
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        name text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // No FK on events.project_id: the contact already belongs to the project, and a second FK would make
    // every tracked event take a lock on the one projects row all of a project's requests share.
    await q.query(`CREATE INDEX events_project_id_idx ON events (project_id, id)`);
    await q.query(`CREATE INDEX events_project_name_idx ON events (project_id, name, id)`);
    await q.query(`CREATE INDEX events_contact_idx ON events (contact_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP TABLE contacts`);
    await q.query(`DROP FUNCTION uuid_generate_v7()`);
  }
}
