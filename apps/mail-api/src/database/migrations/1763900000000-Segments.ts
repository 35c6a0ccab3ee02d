import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Segments (dynamic: a stored condition; static: member rows) and the indexes the compiled segment
 * conditions (modules/segments/segment-condition-sql.ts) probe.
 */
export class Segments1763900000000 implements MigrationInterface {
  name = 'Segments1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE segments (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        type text NOT NULL CONSTRAINT segments_type_check CHECK (type IN ('DYNAMIC', 'STATIC')),
        condition jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT segments_condition_matches_type CHECK ((type = 'DYNAMIC') = (condition IS NOT NULL))
      )`);
    // Keyset pages (GET /segments), led by the project.
    await q.query(`CREATE INDEX segments_project_id_idx ON segments (project_id, id)`);

    // The primary key serves the membership probe (segment_id, contact_id) and the member pages
    // (segment_id = $1 ORDER BY contact_id DESC); the contact index serves contact deletes (cascade).
    await q.query(`
      CREATE TABLE segment_members (
        project_id uuid NOT NULL,
        segment_id uuid NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (segment_id, contact_id)
      )`);
    await q.query(`CREATE INDEX segment_members_contact_idx ON segment_members (contact_id)`);

    // event.<name> triggered / triggeredWithin, both ways the planner joins: one probe per contact (few
    // candidate contacts, per-row FILTERs, a workflow's one contact), or one range of the project's
    // events of that name (a hash semi-join against many contacts; contact_id makes it index-only).
    await q.query(`CREATE INDEX events_contact_name_created_idx ON events (contact_id, name, created_at)`);
    await q.query(`CREATE INDEX events_project_name_created_idx ON events (project_id, name, created_at, contact_id)`);
    // data.<key> equals (@>).
    await q.query(`CREATE INDEX contacts_data_path_idx ON contacts USING gin (data jsonb_path_ops)`);
    // createdAt ranges (gt/lt/within/olderThan) within a project.
    await q.query(`CREATE INDEX contacts_project_created_idx ON contacts (project_id, created_at)`);

    // Stored data values that are ISO 8601 dates, read as instants (no offset: UTC, as the API reads
    // filter values); anything else, impossible dates included, is NULL, never an error that would fail
    // a whole segment count. The pattern is segment-fields.ts's VALID_ISO_DATE: once it matches, the
    // cast cannot fail, so there is no exception block (a subtransaction per call, and not parallel
    // safe). One SQL expression: the planner inlines it into the query.
    await q.query(String.raw`
      CREATE FUNCTION segment_text_to_timestamptz(value text) RETURNS timestamptz
      LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN value !~ '^(?:[1-9]\d{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))|(?:[1-9]\d(?:0[48]|[2468][048]|[13579][26])|(?:1[26]|[2468][048]|[3579][26])00)-02-29)(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:0\d|1[0-5])(?::?[0-5]\d)?)?)?$'
            THEN NULL
          -- Matched: after the date (10 characters), a Z, + or - can only start an offset. No second regex:
          -- each costs microseconds per row.
          WHEN right(value, 1) = 'Z' OR strpos(substr(value, 11), '+') > 0 OR strpos(substr(value, 11), '-') > 0
            THEN value::timestamptz
          ELSE value::timestamp AT TIME ZONE 'UTC'
        END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION segment_text_to_timestamptz(text)`);
    await q.query(`DROP INDEX contacts_project_created_idx`);
    await q.query(`DROP INDEX contacts_data_path_idx`);
    await q.query(`DROP INDEX events_project_name_created_idx`);
    await q.query(`DROP INDEX events_contact_name_created_idx`);
    await q.query(`DROP TABLE segment_members`);
    await q.query(`DROP TABLE segments`);
  }
}
