import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `audit_changes(before, after)`: the action log's `changes`, `{field: {from, to}}` for every
 * top-level field whose value differs (`updatedAt` ignored; a missing field equals null) — the same
 * rule as `diffSnapshots` in core/audit. It lets the command bus take the "after" snapshot and write
 * the log entry in one statement. jsonb equality ignores key order and compares numbers by value, as
 * the TypeScript rule does. PL/pgSQL, not SQL: its plan is cached per session (a SQL function
 * in an INSERT is planned on every call).
 */
export class AuditChanges1763840000000 implements MigrationInterface {
  name = 'AuditChanges1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION audit_changes(before jsonb, after jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
      BEGIN
        RETURN (SELECT coalesce(jsonb_object_agg(k, jsonb_build_object('from', coalesce(before -> k, 'null'), 'to', coalesce(after -> k, 'null'))), '{}'::jsonb)
          FROM (SELECT jsonb_object_keys(coalesce(before, '{}'::jsonb)) UNION SELECT jsonb_object_keys(coalesce(after, '{}'::jsonb))) AS keys(k)
         WHERE k <> 'updatedAt' AND coalesce(before -> k, 'null') IS DISTINCT FROM coalesce(after -> k, 'null'));
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION audit_changes(jsonb, jsonb)`);
  }
}
