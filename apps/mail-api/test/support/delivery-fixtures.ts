import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { waitFor } from '@app/service-kit/testing';

/** What fixtures need of a database handle: TypeORM's `DataSource.query` or a pg client wrapper. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

export interface VerifiedDomain {
  domain: string;
  selector: string;
  privateKey: string;
  /** The DKIM TXT record value published at `<selector>._domainkey.<domain>`. */
  dkimRecord: string;
}

/** A DNS TXT resolver for mailauth's dkimVerify that publishes only `domain`'s DKIM record. */
export function dkimResolver(domain: VerifiedDomain): (name: string) => Promise<string[][]> {
  return (name) =>
    name === `${domain.selector}._domainkey.${domain.domain}`
      ? Promise.resolve([domain.dkimRecord.match(/.{1,250}/g) ?? []])
      : Promise.reject(Object.assign(new Error(`no TXT for ${name}`), { code: 'ENOTFOUND' }));
}

/**
 * A VERIFIED sending domain with a fresh RSA key pair, written directly: delivery tests do not test
 * domain verification (the domains API does), they need a domain the pipeline may sign with.
 */
export async function insertVerifiedDomain(db: Queryable, projectId: string, domain: string): Promise<VerifiedDomain> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicDer = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const selector = `s${randomBytes(3).toString('hex')}`;
  await db.query(
    `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
     VALUES ($1, $2, 'VERIFIED', $3, $4, $5, $6, now())`,
    [projectId, domain, randomBytes(16).toString('hex'), selector, privatePem, publicDer],
  );
  return { domain, selector, privateKey: privatePem, dkimRecord: `v=DKIM1; k=rsa; p=${publicDer}` };
}

export interface EmailFixture {
  to?: string;
  toName?: string | null;
  from?: string;
  fromName?: string | null;
  replyTo?: string | null;
  subject?: string;
  html?: string;
  headers?: Record<string, string>;
  type?: 'TRANSACTIONAL' | 'MARKETING';
  contactId?: string | null;
  campaignId?: string | null;
  sendRequestId?: string | null;
}

/** Inserts QUEUED email rows (one statement) and answers their ids in order. */
export async function insertEmails(
  db: Queryable,
  projectId: string,
  emails: EmailFixture[],
  defaults: EmailFixture = {},
): Promise<string[]> {
  const rows = emails.map((e, i) => {
    const m = { ...defaults, ...e };
    return {
      to_email: m.to ?? `recipient-${i}@example.net`,
      to_name: m.toName ?? null,
      from_email: m.from ?? 'sender@example.com',
      from_name: m.fromName ?? null,
      reply_to: m.replyTo ?? null,
      subject: m.subject ?? `Message ${i}`,
      html: m.html ?? `<p>Hello number ${i}</p>`,
      headers: m.headers ?? {},
      type: m.type ?? 'TRANSACTIONAL',
      contact_id: m.contactId ?? null,
      campaign_id: m.campaignId ?? null,
      send_request_id: m.sendRequestId ?? null,
    };
  });
  const result = (await db.query(
    `INSERT INTO emails (project_id, to_email, to_name, from_email, from_name, reply_to, subject, html, headers, type,
                         contact_id, campaign_id, send_request_id)
     SELECT $1, r.to_email, r.to_name, r.from_email, r.from_name, r.reply_to, r.subject, r.html, r.headers, r.type,
            r.contact_id, r.campaign_id, r.send_request_id
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(doc, n),
            jsonb_to_record(e.doc) AS r(to_email text, to_name text, from_email text, from_name text, reply_to text, subject text,
            html text, headers jsonb, type text, contact_id uuid, campaign_id uuid, send_request_id uuid)
      ORDER BY e.n
     RETURNING id`,
    [projectId, JSON.stringify(rows)],
  )) as { id: string }[];
  return result.map((r) => r.id);
}

/** A send request holding attachments (`content` base64), as the send endpoint stores them. */
export async function insertSendRequest(
  db: Queryable,
  projectId: string,
  attachments: { filename: string; content: string; contentType?: string }[],
): Promise<string> {
  const [row] = (await db.query(`INSERT INTO send_requests (project_id, attachments) VALUES ($1, $2::jsonb) RETURNING id`, [
    projectId,
    JSON.stringify(attachments),
  ])) as { id: string }[];
  return row.id;
}

export async function insertContact(db: Queryable, projectId: string, email: string, subscribed = true): Promise<string> {
  const [row] = (await db.query(`INSERT INTO contacts (project_id, email, subscribed) VALUES ($1, $2, $3) RETURNING id`, [
    projectId,
    email,
    subscribed,
  ])) as { id: string }[];
  return row.id;
}

export interface EmailRow {
  id: string;
  status: string;
  attempts: number;
  error: string | null;
  provider_message_id: string | null;
  sent_at: Date | null;
  failed_at: Date | null;
  claimed_until: Date | null;
}

export async function emailRows(db: Queryable, ids: string[]): Promise<EmailRow[]> {
  return (await db.query(
    `SELECT id, status, attempts, error, provider_message_id, sent_at, failed_at, claimed_until
       FROM emails WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)`,
    [ids],
  )) as EmailRow[];
}

/** Waits until every listed email has reached one of `statuses`; answers their rows. */
export function waitForStatus(db: Queryable, ids: string[], statuses: string[], timeoutMs = 20_000): Promise<EmailRow[]> {
  return waitFor(
    async () => {
      const rows = await emailRows(db, ids);
      return rows.length === ids.length && rows.every((r) => statuses.includes(r.status)) ? rows : null;
    },
    timeoutMs,
    `emails to be ${statuses.join('/')}`,
  );
}

export { waitFor };

/** Job states of work still to come in a queue (a job being retried waits as `delayed`). */
const UNFINISHED_JOB_STATES = ['active', 'wait', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Resolves once none of `queues` holds a job still to run: the positive signal before asserting that
 * something did not happen (every job the test's actions could have added has finished, not "300 ms
 * passed"). Throws with the counts left after `timeoutMs`.
 */
export async function waitForQueuesDrained(queues: readonly Queue[], timeoutMs = 20_000): Promise<void> {
  let left: Record<string, number> = {};
  try {
    await waitFor(
      async () => {
        left = {};
        for (const queue of queues) {
          const counts = await queue.getJobCounts(...UNFINISHED_JOB_STATES);
          for (const [state, n] of Object.entries(counts)) if (n > 0) left[`${queue.name}:${state}`] = n;
        }
        return Object.keys(left).length === 0 ? true : null;
      },
      timeoutMs,
      'the queues to drain',
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${JSON.stringify(left)} left`, { cause: err });
  }
}
