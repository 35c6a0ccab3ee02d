import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The daily token budgets sum a tenant's usage rows since UTC midnight on every chat and run-object
 * request: the tenant index now carries the user and the token counts, so that sum is an index-only
 * scan. It replaces the plain (tenant_id, created_at) index, which every other reader of the table
 * (daily rollups, session summaries) uses the same way.
 */
export class AiUsageBudgetIndex1763939200000 implements MigrationInterface {
  name = 'AiUsageBudgetIndex1763939200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ai_usage_events_tenant_created_tokens_idx ON ai_usage_events (tenant_id, created_at)
         INCLUDE (user_id, input_tokens, output_tokens)`,
    );
    await q.query(`DROP INDEX ai_usage_events_tenant_created_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ai_usage_events_tenant_created_idx ON ai_usage_events (tenant_id, created_at)`);
    await q.query(`DROP INDEX ai_usage_events_tenant_created_tokens_idx`);
  }
}
