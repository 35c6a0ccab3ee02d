import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attachments (issue #16): the metadata of each stored file. The bytes live in the storage driver
 * (local disk or S3) under `storage_key`; `mime_type` is sniffed from the bytes at upload, `checksum`
 * is their SHA-256 (hex, also the ETag). `partition_code` decides who may read the file
 * (`privateAttachments`: the tenant, `publicMedia`: anyone).
 */
export class Attachments1763900000000 implements MigrationInterface {
  name = 'Attachments1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE attachments (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        partition_code text NOT NULL,
        entity_id text NOT NULL,
        record_id text NOT NULL,
        file_name text NOT NULL,
        mime_type text NOT NULL,
        file_size integer NOT NULL CHECK (file_size >= 0),
        storage_key text NOT NULL,
        checksum text NOT NULL,
        created_by_user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX attachments_storage_key_uq ON attachments (storage_key)`);
    // The list: one record's attachments in a tenant, newest first.
    await q.query(`CREATE INDEX attachments_record_idx ON attachments (tenant_id, entity_id, record_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE attachments`);
  }
}
