import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The hourly purge of expired rows finds them by expiry (sessions already have such an index). */
export class Housekeeping1763860000000 implements MigrationInterface {
  name = 'Housekeeping1763860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX auth_tokens_expires_idx ON auth_tokens (expires_at)`);
    await q.query(`CREATE INDEX notifications_expires_idx ON notifications (expires_at) WHERE expires_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX notifications_expires_idx`);
    await q.query(`DROP INDEX auth_tokens_expires_idx`);
  }
}
