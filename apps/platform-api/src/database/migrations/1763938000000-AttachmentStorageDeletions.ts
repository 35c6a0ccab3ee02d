import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored attachment bytes waiting to be removed (issue #27 item 9): a row per storage key (or key
 * prefix, ending with `/`) written in the same transaction as the metadata delete that orphans it (an
 * attachment's delete, a tenant's delete, an evicted image variant), and deleted once the storage
 * confirms the bytes are gone. A failed removal stays, with its attempts, last error and next attempt,
 * for the worker's sweep: nothing is lost when Redis is. No foreign key to `tenants`: the rows of a
 * deleted tenant are exactly the ones that must outlive it.
 */
export class AttachmentStorageDeletions1763938000000 implements MigrationInterface {
  name = 'AttachmentStorageDeletions1763938000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE attachment_storage_deletions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant_id uuid NOT NULL,
        storage_key text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX attachment_storage_deletions_key_uq ON attachment_storage_deletions (tenant_id, storage_key)`);
    // The sweep, across tenants: the rows due first.
    await q.query(`CREATE INDEX attachment_storage_deletions_due_idx ON attachment_storage_deletions (next_attempt_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE attachment_storage_deletions`);
  }
}
