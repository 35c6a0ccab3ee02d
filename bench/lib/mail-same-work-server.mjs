// The same-work baseline of the mail API's hot endpoints (issue #34): a plain Express 5 app in its own
// process, on $PORT, against the mail API's own bench database ($DATABASE_URL) and Redis ($REDIS_URL),
// doing the least each endpoint must do with the same statements, and nothing else (no Nest, no logs,
// no DTO classes, no OpenAPI):
//
// - every route: the bearer key hashed (sha256) and looked up by hash (the API's SELECT, cached in a Map
//   as the API caches it), then one point of the project's rate limit in Redis (rate-limiter-flexible's
//   Lua, an auto-pipelined connection, as the API's ApiRateLimiter: the RateLimit-* headers are part of
//   the contract), under its own key prefix so the two counts do not mix;
// - POST /v1/send (one recipient): the sender domain's SELECT, then BEGIN, the recipients' contact upsert,
//   the email row's INSERT, COMMIT, and BullMQ's addBulk of the job with the API's options;
// - POST /v1/track: the one-statement contact upsert + event insert (TRACK_SQL of track.repository.ts);
// - GET /contacts?limit=20: the keyset page with the maintained total, one statement.
//
// The SQL texts are the repositories' (named prepared statements, as queryPrepared sends them); when a
// repository's statement changes, change it here too, or the baseline stops being the same work.
import { createHash } from 'node:crypto';
import express from 'express';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

const queuePrefix = process.env.QUEUE_PREFIX ?? 'bench';
const rateLimit = Number(process.env.MAIL_RATE_LIMIT_PER_MINUTE ?? 1000);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20, idleTimeoutMillis: 30_000 });
const limiterRedis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: true });
const queueRedis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const emailQueue = new Queue('mail-email', { connection: queueRedis, prefix: queuePrefix });
const limiter = new RateLimiterRedis({
  storeClient: limiterRedis,
  keyPrefix: `${queuePrefix}:mail-same-work:rl:api`,
  points: rateLimit,
  duration: 60,
  insuranceLimiter: new RateLimiterMemory({ points: rateLimit, duration: 60 }),
});

// The statements, as the repositories send them.
const BY_SECRET_KEY = `SELECT id, name, disabled FROM projects WHERE secret_key_hash = $1`;
const SENDER_DOMAIN = `SELECT 1 FROM domains WHERE project_id = $1 AND domain = $2 AND status = 'VERIFIED'`;
const UPSERT_RECIPIENTS = `INSERT INTO contacts (project_id, email, subscribed)
       SELECT $1, e.email, coalesce($3::boolean, false) FROM unnest($2::text[]) AS e(email) ORDER BY lower(e.email)
       ON CONFLICT (project_id, (lower(email))) DO UPDATE
         SET subscribed = coalesce($3::boolean, contacts.subscribed),
             updated_at = CASE WHEN $3::boolean IS NULL THEN contacts.updated_at ELSE now() END
       RETURNING id, lower(email) AS email`;
const INSERT_EMAILS = `INSERT INTO emails (project_id, send_request_id, contact_id, template_id, type, to_email, to_name,
                           from_email, from_name, reply_to, subject, html, headers)
       SELECT $1, $2, r.contact_id, $3, $4, r.to_email, r.to_name, $5, $6, $7, r.subject, r.html, $8
         FROM unnest($9::uuid[], $10::text[], $11::text[], $12::text[], $13::text[]) WITH ORDINALITY
              AS r(contact_id, to_email, to_name, subject, html, ord)
        ORDER BY r.ord
       RETURNING id, lower(to_email) AS to_email`;
const TRACK_SQL = `
  WITH unchanged AS (
    SELECT id FROM contacts
     WHERE project_id = $1::uuid AND lower(email) = lower($2::text)
       AND ($3::boolean IS NULL OR subscribed = $3::boolean)
       AND (($8::jsonb || data) || $4::jsonb) - $5::text[] = data
  ),
  upserted AS (
    
  INSERT INTO contacts (project_id, email, subscribed, data)
  SELECT $1::uuid, $2::text, coalesce($3::boolean, $9::boolean, true), $8::jsonb || $4::jsonb WHERE NOT EXISTS (SELECT 1 FROM unchanged)
  ON CONFLICT (project_id, (lower(email))) DO UPDATE
    SET subscribed = coalesce($3::boolean, contacts.subscribed),
        data = (($8::jsonb || contacts.data) || $4::jsonb) - $5::text[],
        updated_at = now()
    RETURNING id
  ),
  contact AS (SELECT id FROM unchanged UNION ALL SELECT id FROM upserted),
  event AS (
    INSERT INTO events (project_id, contact_id, name, data)
    SELECT $1::uuid, id, $6::text, $7::jsonb FROM contact
    RETURNING id, contact_id, created_at
  )
  SELECT id, contact_id, created_at FROM event`;
const iso = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const CONTACT_PAGE = `SELECT p.*, (SELECT coalesce(sum(contacts), 0)::int FROM contact_counts WHERE project_id = $1) AS total FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT id, email, subscribed, data, ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at FROM contacts WHERE project_id = $1 ORDER BY id DESC LIMIT $2) AS p ON true`;

const statementNames = new Map();
/** A named prepared statement (what queryPrepared sends): parsed and planned once per connection. */
function prepared(text, values) {
  let name = statementNames.get(text);
  if (!name) statementNames.set(text, (name = `b${createHash('sha1').update(text).digest('hex').slice(0, 16)}`));
  return { name, text, values };
}

const projects = new Map();
/** The key's project: sha256 of the key, looked up once and then kept (the API caches for 30 s). */
async function project(req) {
  const match = /^Bearer\s+(sk_[0-9a-f]{48})\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const hash = createHash('sha256').update(match[1]).digest('hex');
  let found = projects.get(hash);
  if (!found) {
    found = (await pool.query(prepared(BY_SECRET_KEY, [hash]))).rows[0] ?? null;
    if (found) projects.set(hash, found);
  }
  return found && !found.disabled ? found : null;
}

/** Key check and one rate-limit point; answers the refusal itself and returns null then. */
async function authorize(req, res) {
  const found = await project(req);
  if (!found) {
    res.status(401).json({ success: false, error: { code: 'INVALID_API_KEY' } });
    return null;
  }
  let rate;
  try {
    rate = await limiter.consume(found.id);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    res.status(429).json({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED' } });
    return null;
  }
  res.setHeader('RateLimit-Limit', String(rateLimit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, rate.remainingPoints)));
  res.setHeader('RateLimit-Reset', String(Math.max(1, Math.ceil(rate.msBeforeNext / 1000))));
  return found;
}

const escapeHtml = (value) =>
  String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
/** `{{name}}` from the variables (the least rendering a send needs; no fallbacks, no paths). */
const render = (source, variables, html) =>
  source.replace(/\{\{\s*([A-Za-z0-9_-]{1,200})\s*\}\}/g, (_, name) => {
    const value = variables[name];
    if (value === undefined || value === null) return '';
    return html ? escapeHtml(value) : String(value);
  });
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

const handle = (fn) => (req, res, next) => fn(req, res).catch(next);
const app = express();
app.disable('x-powered-by');

app.post(
  '/v1/send',
  express.json({ limit: '16mb' }),
  handle(async (req, res) => {
    const found = await authorize(req, res);
    if (!found) return;
    const { to, from, subject, body, data = {} } = req.body ?? {};
    if (
      typeof to !== 'string' ||
      !EMAIL.test(to) ||
      typeof from?.email !== 'string' ||
      typeof subject !== 'string' ||
      typeof body !== 'string'
    )
      return res.status(422).json({ success: false, error: { code: 'VALIDATION_ERROR' } });
    const domain = from.email.slice(from.email.lastIndexOf('@') + 1).toLowerCase();
    const sender = (await pool.query(prepared(SENDER_DOMAIN, [found.id, domain]))).rows[0];
    if (!sender) return res.status(403).json({ success: false, error: { code: 'DOMAIN_NOT_VERIFIED' } });
    const variables = { ...data, email: to };
    const client = await pool.connect();
    let contactId;
    let emailId;
    try {
      await client.query('BEGIN');
      contactId = (await client.query(prepared(UPSERT_RECIPIENTS, [found.id, [to], null]))).rows[0].id;
      emailId = (
        await client.query(
          prepared(INSERT_EMAILS, [
            found.id,
            null,
            null,
            'TRANSACTIONAL',
            from.email,
            from.name ?? null,
            null,
            '{}',
            [contactId],
            [to],
            [null],
            [render(subject, variables, false).replace(/[\r\n]+/g, ' ')],
            [render(body, variables, true)],
          ]),
        )
      ).rows[0].id;
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    await emailQueue.addBulk([
      {
        name: 'email.deliver',
        data: { emailId, projectId: found.id },
        opts: {
          jobId: emailId,
          priority: 1,
          attempts: 8,
          backoff: { type: 'exponential', delay: 2000 },
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: true,
        },
      },
    ]);
    res.json({
      success: true,
      data: { emails: [{ contact: { id: contactId, email: to }, email: emailId }], timestamp: new Date().toISOString() },
    });
  }),
);

app.post(
  '/v1/track',
  express.json(),
  handle(async (req, res) => {
    const found = await authorize(req, res);
    if (!found) return;
    const { email, event, data = {} } = req.body ?? {};
    if (typeof email !== 'string' || !EMAIL.test(email) || typeof event !== 'string')
      return res.status(422).json({ success: false, error: { code: 'VALIDATION_ERROR' } });
    const set = {};
    const eventData = {};
    for (const [key, value] of Object.entries(data)) {
      const wrapped = value !== null && typeof value === 'object';
      eventData[key] = wrapped ? value.value : value;
      if (!wrapped || value.persistent !== false) set[key] = eventData[key];
    }
    const [row] = (
      await pool.query(prepared(TRACK_SQL, [found.id, email, null, JSON.stringify(set), [], event, JSON.stringify(eventData), '{}', null]))
    ).rows;
    res.json({ success: true, data: { contact: row.contact_id, event: row.id, timestamp: row.created_at.toISOString() } });
  }),
);

app.get(
  '/contacts',
  handle(async (req, res) => {
    const found = await authorize(req, res);
    if (!found) return;
    const limit = Math.min(100, Math.max(1, Number(req.query.limit ?? 20) || 20));
    const rows = (await pool.query(prepared(CONTACT_PAGE, [found.id, limit + 1]))).rows;
    const total = rows[0]?.total ?? 0;
    const page = rows.filter((r) => r.id !== null);
    const hasMore = page.length > limit;
    const contacts = page.slice(0, limit).map((r) => ({
      id: r.id,
      email: r.email,
      subscribed: r.subscribed,
      data: r.data,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
    res.json({
      contacts,
      cursor: hasMore ? Buffer.from(contacts[contacts.length - 1].id).toString('base64url') : null,
      hasMore,
      total,
    });
  }),
);

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

// Express knows an error handler by its four parameters.
// eslint-disable-next-line no-unused-vars
app.use((err, _req, res, _next) => {
  console.error(err);
  res.status(500).json({ success: false, error: { code: 'INTERNAL_ERROR' } });
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(async () => {
    await emailQueue.close().catch(() => undefined);
    limiterRedis.disconnect();
    queueRedis.disconnect();
    // No pool.end(): a request still in flight would fail on an ended pool; exiting closes the sockets.
    process.exit(0);
  });
  server.closeAllConnections();
});
