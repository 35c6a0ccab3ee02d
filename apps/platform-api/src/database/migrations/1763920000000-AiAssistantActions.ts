import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The AI assistant's pending actions (mutations waiting for the user's confirmation), the per-tenant
 * mutation-policy overrides, the versioned prompt overrides and the MCP session keys.
 */
export class AiAssistantActions1763920000000 implements MigrationInterface {
  name = 'AiAssistantActions1763920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ai_pending_actions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        agent_id text NOT NULL,
        tool_name text NOT NULL,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'cancelled', 'expired', 'confirmed', 'failed', 'executing')),
        target_entity_type text,
        target_record_id text,
        field_diff jsonb NOT NULL DEFAULT '{}'::jsonb,
        record_version double precision,
        attachment_ids text[] NOT NULL DEFAULT '{}',
        normalized_input jsonb NOT NULL,
        session_id uuid,
        created_by_user_id uuid NOT NULL,
        idempotency_key text NOT NULL,
        execution_result jsonb,
        cancel_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        resolved_at timestamptz,
        resolved_by_user_id uuid
      )`);
    await q.query(`CREATE INDEX ai_pending_actions_tenant_created_idx ON ai_pending_actions (tenant_id, created_at DESC)`);
    // The expiry job walks the pending rows by expiry; nothing else stays pending for long.
    await q.query(`CREATE INDEX ai_pending_actions_pending_expiry_idx ON ai_pending_actions (expires_at) WHERE status = 'pending'`);
    // The same proposal (user, agent, tool, input, session) while it is pending is one action, not two.
    await q.query(
      `CREATE UNIQUE INDEX ai_pending_actions_pending_key_uq ON ai_pending_actions (tenant_id, idempotency_key) WHERE status = 'pending'`,
    );

    await q.query(`
      CREATE TABLE ai_mutation_policy_overrides (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        agent_id text NOT NULL,
        mutation_policy text NOT NULL CHECK (mutation_policy IN ('read-only', 'confirm-required', 'destructive-confirm-required')),
        notes text,
        updated_by_user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, agent_id)
      )`);

    // The last version handed out per (tenant, organization, agent): versions never repeat, even if rows go.
    await q.query(`
      CREATE TABLE ai_prompt_override_counters (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        agent_id text NOT NULL,
        last_version integer NOT NULL,
        CONSTRAINT ai_prompt_override_counters_uq UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, agent_id)
      )`);
    await q.query(`
      CREATE TABLE ai_prompt_overrides (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        agent_id text NOT NULL,
        version integer NOT NULL CHECK (version > 0),
        sections jsonb NOT NULL,
        notes text,
        created_by_user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ai_prompt_overrides_version_uq UNIQUE NULLS NOT DISTINCT (tenant_id, organization_id, agent_id, version)
      )`);

    await q.query(`
      CREATE TABLE ai_session_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid,
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX ai_session_keys_tenant_user_idx ON ai_session_keys (tenant_id, user_id)`);
    await q.query(`CREATE INDEX ai_session_keys_expires_idx ON ai_session_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP TABLE ai_session_keys, ai_prompt_overrides, ai_prompt_override_counters, ai_mutation_policy_overrides, ai_pending_actions`,
    );
  }
}
