import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A provider key a tenant stores with its own base URL (PUT /ai_assistant/settings `apiKey`), sealed
 * (AES-256-GCM, modules/ai-assistant/settings/provider-key-cipher.ts): the deployment's key never goes
 * to a base URL other than the deployment's, so a tenant's own endpoint gets this key or none.
 */
export class AiTenantProviderKeys1763939100000 implements MigrationInterface {
  name = 'AiTenantProviderKeys1763939100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ai_runtime_settings ADD COLUMN api_key_sealed text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ai_runtime_settings DROP COLUMN api_key_sealed`);
  }
}
