import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounded image variants (issue #27 item 2, decisions.md "Resizing limits"). `image_width` and
 * `image_height` are an image attachment's size as displayed (EXIF orientation applied), read once
 * from its bytes, so a request can be clamped to the source before its variant is looked up.
 * `attachment_variants` lists the resized variants stored for an attachment (`variant` names the
 * storage key under `resized/<id>/`), with when each was last served: at most 25 are kept, the least
 * recently used beyond are removed. Rows go with their attachment.
 */
export class AttachmentVariants1763937000000 implements MigrationInterface {
  name = 'AttachmentVariants1763937000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE attachments ADD COLUMN image_width integer, ADD COLUMN image_height integer`);
    await q.query(`
      CREATE TABLE attachment_variants (
        tenant_id uuid NOT NULL,
        attachment_id uuid NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
        variant text NOT NULL,
        last_used_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (tenant_id, attachment_id, variant)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE attachment_variants`);
    await q.query(`ALTER TABLE attachments DROP COLUMN image_width, DROP COLUMN image_height`);
  }
}
