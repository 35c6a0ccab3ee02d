import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Action logs (every mutation, with snapshots and undo state) and access logs (reads of sensitive data). */
export class AuditLogs1763810000000 implements MigrationInterface {
  name = 'AuditLogs1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE action_logs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        actor_user_id uuid,
        command_id text NOT NULL,
        action_label text,
        action_type text NOT NULL CHECK (action_type IN ('create', 'edit', 'delete', 'assign')),
        resource_kind text,
        resource_id text,
        parent_resource_kind text,
        parent_resource_id text,
        execution_state text NOT NULL DEFAULT 'done'
          CHECK (execution_state IN ('done', 'undoing', 'undone', 'failed', 'redone')),
        undo_token text UNIQUE,
        snapshot_before jsonb,
        snapshot_after jsonb,
        changes jsonb,
        changed_fields text[] NOT NULL DEFAULT '{}',
        context jsonb,
        source text NOT NULL DEFAULT 'api',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX action_logs_tenant_created_idx ON action_logs (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX action_logs_tenant_actor_idx ON action_logs (tenant_id, actor_user_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX action_logs_tenant_resource_idx ON action_logs (tenant_id, resource_kind, resource_id)`);
    await q.query(`CREATE INDEX action_logs_tenant_parent_idx ON action_logs (tenant_id, parent_resource_kind, parent_resource_id)`);
    await q.query(`
      CREATE TABLE access_logs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        actor_user_id uuid,
        resource_kind text NOT NULL,
        resource_id text,
        access_type text NOT NULL,
        fields text[] NOT NULL DEFAULT '{}',
        context jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX access_logs_tenant_created_idx ON access_logs (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX access_logs_tenant_actor_idx ON access_logs (tenant_id, actor_user_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE access_logs, action_logs`);
  }
}
