import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sending: domains (ownership + DKIM), templates, one `emails` row per recipient (the delivery
 * pipeline's source of truth: a queue lost in Redis is rebuilt from the QUEUED rows), the attachments
 * of a send request (stored once, shared by its recipients), and the `Idempotency-Key` replays.
 */
export class MailDelivery1763850000000 implements MigrationInterface {
  name = 'MailDelivery1763850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE domains (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        domain text NOT NULL,
        status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'VERIFIED', 'FAILED')),
        verification_token text NOT NULL,
        dkim_selector text NOT NULL,
        dkim_private_key text NOT NULL,
        dkim_public_key text NOT NULL,
        last_checked_at timestamptz,
        -- What the last check found for each record (null before the first check).
        ownership_record_found boolean,
        dkim_record_found boolean,
        verified_at timestamptz,
        failure_reasons text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT domains_domain_is_lower CHECK (domain = lower(domain))
      )`);
    await q.query(`CREATE UNIQUE INDEX domains_project_domain_uq ON domains (project_id, domain)`);
    // The periodic recheck scans pending domains only.
    await q.query(`CREATE INDEX domains_pending_idx ON domains (last_checked_at NULLS FIRST) WHERE status <> 'VERIFIED'`);

    await q.query(`
      CREATE TABLE templates (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        subject text NOT NULL,
        body text NOT NULL,
        from_email text,
        from_name text,
        reply_to text,
        type text NOT NULL DEFAULT 'TRANSACTIONAL' CHECK (type IN ('TRANSACTIONAL', 'MARKETING')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX templates_project_id_idx ON templates (project_id, id)`);
    // DELETE /domains/{id} asks "does a template send from this domain?".
    await q.query(`CREATE INDEX templates_from_domain_idx ON templates (project_id, lower(split_part(from_email, '@', 2)))`);

    await q.query(`
      CREATE TABLE send_requests (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        attachments jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE emails (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        send_request_id uuid REFERENCES send_requests(id) ON DELETE SET NULL,
        contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
        template_id uuid REFERENCES templates(id) ON DELETE SET NULL,
        campaign_id uuid,
        type text NOT NULL DEFAULT 'TRANSACTIONAL' CHECK (type IN ('TRANSACTIONAL', 'MARKETING')),
        to_email text NOT NULL,
        to_name text,
        from_email text NOT NULL,
        from_name text,
        reply_to text,
        subject text NOT NULL,
        html text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        status text NOT NULL DEFAULT 'QUEUED' CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'FAILED')),
        attempts integer NOT NULL DEFAULT 0,
        claimed_until timestamptz,
        provider_message_id text,
        error text,
        queued_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        failed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX emails_project_id_idx ON emails (project_id, id)`);
    await q.query(`CREATE INDEX emails_contact_idx ON emails (contact_id, id)`);
    // The purge of finished send requests looks their emails up (and the FK's SET NULL does too).
    await q.query(`CREATE INDEX emails_send_request_idx ON emails (send_request_id) WHERE send_request_id IS NOT NULL`);
    // Re-queueing after a Redis loss, and the stale-claim sweep, read unfinished emails only, keyset-paged
    // by (queued_at, id): the rows of one send share their queued_at (one transaction's now()).
    await q.query(`CREATE INDEX emails_unfinished_idx ON emails (queued_at, id) WHERE status IN ('QUEUED', 'SENDING')`);

    await q.query(`
      CREATE TABLE idempotency_keys (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key text NOT NULL,
        request_hash text NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE emails`);
    await q.query(`DROP TABLE send_requests`);
    await q.query(`DROP TABLE templates`);
    await q.query(`DROP TABLE domains`);
  }
}
