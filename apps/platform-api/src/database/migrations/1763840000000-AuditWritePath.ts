import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The write path of the action log, which every command pays for:
 *
 * - `audit_changes(before, after)`: the entry's `changes`, `{field: {from, to}}` for every top-level
 *   field whose value differs (`updatedAt` ignored; a missing field equals null), the same rule as
 *   `diffSnapshots` in core/audit. It lets the command bus take the "after" snapshot and write the
 *   entry in one statement. jsonb equality ignores key order and compares numbers by value, as the
 *   TypeScript rule does. PL/pgSQL, not SQL: its plan is cached per session (a SQL function called
 *   from an INSERT is planned on every call). `before || after` is the union of the keys without a
 *   sort.
 * - Time-ordered entry ids (UUIDv7): new entries land at the right edge of the primary key instead
 *   of on a random page of it.
 * - The parent index only holds entries that have a parent (most commands have none).
 * - Snapshots of a role read its ACLs and memberships by role id: without an index on role_id these
 *   were sequential scans (and so were the cascades of a role delete).
 */
export class AuditWritePath1763840000000 implements MigrationInterface {
  name = 'AuditWritePath1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION audit_changes(before jsonb, after jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
      BEGIN
        RETURN (SELECT coalesce(jsonb_object_agg(k, jsonb_build_object('from', coalesce(before -> k, 'null'), 'to', coalesce(after -> k, 'null'))), '{}'::jsonb)
          FROM jsonb_object_keys(coalesce(before, '{}'::jsonb) || coalesce(after, '{}'::jsonb)) AS k
         WHERE k <> 'updatedAt' AND coalesce(before -> k, 'null') IS DISTINCT FROM coalesce(after -> k, 'null'));
      END
      $$`);
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
    await q.query(`ALTER TABLE action_logs ALTER COLUMN id SET DEFAULT uuid_generate_v7()`);
    await q.query(`DROP INDEX action_logs_tenant_parent_idx`);
    await q.query(
      `CREATE INDEX action_logs_tenant_parent_idx ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)
        WHERE parent_resource_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX role_acls_role_idx ON role_acls (role_id)`);
    await q.query(`CREATE INDEX user_roles_role_idx ON user_roles (role_id, user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX user_roles_role_idx`);
    await q.query(`DROP INDEX role_acls_role_idx`);
    await q.query(`DROP INDEX action_logs_tenant_parent_idx`);
    await q.query(`CREATE INDEX action_logs_tenant_parent_idx ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)`);
    await q.query(`ALTER TABLE action_logs ALTER COLUMN id SET DEFAULT gen_random_uuid()`);
    await q.query(`DROP FUNCTION uuid_generate_v7()`);
    await q.query(`DROP FUNCTION audit_changes(jsonb, jsonb)`);
  }
}
