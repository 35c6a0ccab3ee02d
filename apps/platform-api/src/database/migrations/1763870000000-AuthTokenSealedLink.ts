import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The raw reset/setup token, sealed (AES-256-GCM, see modules/auth/token-sealing.ts), so the worker
 * can build the emailed link without the token ever sitting in a Redis job; erased once sent.
 */
export class AuthTokenSealedLink1763870000000 implements MigrationInterface {
  name = 'AuthTokenSealedLink1763870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE auth_tokens ADD COLUMN sealed_token text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE auth_tokens DROP COLUMN sealed_token`);
  }
}
