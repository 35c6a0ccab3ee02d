import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Projects and their API key hashes: what the auth guard and the bootstrap need. */
export class Projects1763790000000 implements MigrationInterface {
  name = 'Projects1763790000000';

  async up(q: QueryRunner): Promise<void> {
    // The UNIQUE constraints double as the indexes every authenticated request looks keys up by.
    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        secret_key_hash text NOT NULL CONSTRAINT projects_secret_key_hash_uq UNIQUE,
        public_key_hash text NOT NULL CONSTRAINT projects_public_key_hash_uq UNIQUE,
        secret_key_prefix text NOT NULL,
        disabled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE projects`);
  }
}
