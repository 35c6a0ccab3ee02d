import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The AI assistant's runtime: per-tenant provider settings (a tenant-wide default row and per-agent
 * rows), the tenant's provider allowlist, per-agent loop overrides, and one usage row per model step
 * (daily rollups and session summaries are GROUP BY queries over it, led by its tenant index).
 */
export class AiAssistantRuntime1763910000000 implements MigrationInterface {
  name = 'AiAssistantRuntime1763910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ai_runtime_settings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        agent_id text,
        provider_id text,
        model_id text,
        base_url text,
        allowed_override_providers text[],
        updated_by_user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- One tenant-wide row (agent_id null) and one row per agent.
        CONSTRAINT ai_runtime_settings_tenant_agent_uq UNIQUE NULLS NOT DISTINCT (tenant_id, agent_id)
      )`);

    await q.query(`
      CREATE TABLE ai_runtime_allowlists (
        tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
        allowed_providers text[] NOT NULL,
        allowed_models text[],
        updated_by_user_id uuid,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE ai_agent_loop_overrides (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        agent_id text NOT NULL,
        loop_disabled boolean,
        loop_max_steps integer,
        loop_max_tool_calls integer,
        loop_max_wall_clock_ms integer,
        loop_max_tokens integer,
        loop_stop_when_json jsonb,
        loop_active_tools_json jsonb,
        updated_by_user_id uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, agent_id)
      )`);

    await q.query(`
      CREATE TABLE ai_usage_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        user_id uuid,
        agent_id text NOT NULL,
        provider_id text NOT NULL,
        model_id text NOT NULL,
        session_id uuid NOT NULL,
        step_index integer NOT NULL CHECK (step_index >= 0),
        input_tokens integer NOT NULL DEFAULT 0,
        output_tokens integer NOT NULL DEFAULT 0,
        finish_reason text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX ai_usage_events_tenant_created_idx ON ai_usage_events (tenant_id, created_at)`);
    await q.query(`CREATE INDEX ai_usage_events_tenant_session_idx ON ai_usage_events (tenant_id, session_id, created_at, step_index)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ai_usage_events, ai_agent_loop_overrides, ai_runtime_allowlists, ai_runtime_settings`);
  }
}
