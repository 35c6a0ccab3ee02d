import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { connectionRefused, freePort, parsePrometheusText, waitFor, waitForLockWaiter, type NodeProcess } from '@app/service-kit/testing';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailJob, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { emailRows, insertEmails, insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { createProject } from './support/mail-api-helpers.js';
import { createMailTestEnv, startMailApp, type MailTestApp, type MailTestEnv } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { startApiProcess, startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

const SECRET_KEY = `sk_${randomBytes(24).toString('hex')}`;
const PUBLIC_KEY = `pk_${randomBytes(24).toString('hex')}`;
const LOAD_CONNECTIONS = 24;
/** The API's grace period after SIGTERM (a pod's terminationGracePeriodSeconds is 30 s). */
const GRACE_MS = 20_000;

/** What the load client saw of one request. */
interface Outcome {
  email: string;
  /** After the SIGTERM was sent. */
  afterSignal: boolean;
  /** A complete response: 200, the whole body, `success: true`. */
  ok: boolean;
  status?: number;
  /** The request failed: the socket error (ECONNREFUSED, ECONNRESET, ...) or `aborted` / `bad body`. */
  error?: string;
  /** Sent on a kept-alive connection that had already carried a request. */
  reusedSocket: boolean;
  /** Response headers had arrived when it failed. */
  responseStarted: boolean;
}

function postTrack(agent: http.Agent, port: number, email: string, afterSignal: boolean): Promise<Outcome> {
  const body = JSON.stringify({ email, event: 'ops.load', subscribed: true });
  return new Promise((resolve) => {
    let responseStarted = false;
    const done = (fields: Partial<Outcome>) =>
      resolve({ email, afterSignal, ok: false, reusedSocket: req.reusedSocket, responseStarted, ...fields });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/track',
        method: 'POST',
        agent,
        headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        responseStarted = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('aborted', () => done({ status: res.statusCode, error: 'aborted' }));
        res.on('end', () => {
          if (!res.complete) return done({ status: res.statusCode, error: 'aborted' });
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              success?: boolean;
              data?: { contact?: { email?: string } };
            };
            const ok = res.statusCode === 200 && parsed.success === true;
            done({ ok, status: res.statusCode, error: ok ? undefined : 'bad body' });
          } catch {
            done({ status: res.statusCode, error: 'bad body' });
          }
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end(body);
  });
}

/**
 * For the calling describe block: a fresh test env (database, Redis prefix) and `start`, which runs
 * the compiled API (`dist/main.js`) on `port` with the test's project keys and waits until it
 * listens; a process still running after the block is killed, then the env is dropped.
 */
function keyedApiSuite(): { env: () => MailTestEnv; start: (port: number, overrides?: Record<string, string>) => Promise<NodeProcess> } {
  let env: MailTestEnv | undefined;
  let api: NodeProcess | undefined;
  beforeAll(async () => {
    env = await createMailTestEnv();
  });
  afterAll(async () => {
    await api?.kill('SIGKILL');
    await env?.cleanup();
  });
  const started = () => {
    if (!env) throw new Error('keyedApiSuite: read inside a test, after beforeAll created the env');
    return env;
  };
  return {
    env: started,
    start: async (port, overrides = {}) => {
      api = startApiProcess(
        'mail-api',
        workerEnv(started().config, {
          MAIL_PORT: String(port),
          MAIL_BOOTSTRAP_SECRET_KEY: SECRET_KEY,
          MAIL_BOOTSTRAP_PUBLIC_KEY: PUBLIC_KEY,
          ...overrides,
        }),
      );
      await api.ready;
      return api;
    },
  };
}

/**
 * Graceful shutdown of the real entry points (`dist/main.js`, `dist/worker.js`) under SIGTERM:
 * the API drains what it accepted while under load, the worker finishes what it started mid-batch
 * and a second worker sends the rest, each email exactly once.
 */
describe('graceful shutdown under SIGTERM', () => {
  describe('the API under load', () => {
    const suite = keyedApiSuite();

    it('answers every request it accepted in full, and none of them is lost or reset', async () => {
      const port = await freePort();
      const api = await suite.start(port, { MAIL_RATE_LIMIT_PER_MINUTE: '10000000' });

      const agent = new http.Agent({ keepAlive: true, maxSockets: LOAD_CONNECTIONS });
      const outcomes: Outcome[] = [];
      let signalled = false;
      let exited = false;
      void api.exited.then(() => (exited = true));
      const loop = async (n: number) => {
        for (let i = 0; !exited; i++) {
          const outcome = await postTrack(agent, port, `load-${n}-${i}-${randomUUID().slice(0, 8)}@load.example.com`, signalled);
          outcomes.push(outcome);
          // Once the listener is closed, new connections are refused: this client is done.
          if (outcome.error === 'ECONNREFUSED') return;
        }
      };
      const loops = Array.from({ length: LOAD_CONNECTIONS }, (_, n) => loop(n));
      await waitFor(() => (outcomes.filter((o) => o.ok).length >= 300 ? true : null), 60_000, '300 answered requests before SIGTERM');
      signalled = true;
      api.child.kill('SIGTERM');
      // Like Kubernetes: the process has a grace period, then it is killed (and what it held is reset).
      const exit = await Promise.race([api.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), GRACE_MS))]);
      if (!exit) await api.kill('SIGKILL');
      await Promise.all(loops);
      agent.destroy();

      // Drained within the grace period, even with every connection busy; Nest closes the app, then
      // re-raises the signal (a shutdown that failed would exit with code 1).
      expect(exit ?? `still running ${GRACE_MS / 1000} s after SIGTERM`).toEqual({ code: null, signal: 'SIGTERM' });
      const answered = outcomes.filter((o) => o.ok);
      const failed = outcomes.filter((o) => !o.ok);
      // Requests were in flight when the signal came, and were answered after it.
      expect(answered.filter((o) => o.afterSignal).length).toBeGreaterThan(0);
      // No response was cut off or malformed: a request either got its whole answer or no answer at all.
      expect(failed.filter((o) => o.responseStarted || o.status !== undefined)).toEqual([]);
      // A request without an answer was refused before the server accepted it: a new connection to a
      // closed listener, a kept-alive connection the server had closed while idle, or (after the signal)
      // a new connection the kernel had queued on the listening socket that the process never accepted,
      // reset when the listener closed. The Postgres checks below prove none of them was written.
      const refusedBeforeAcceptance = (o: Outcome) =>
        o.error === 'ECONNREFUSED' ||
        (['ECONNRESET', 'EPIPE'].includes(o.error ?? '') && (o.reusedSocket || o.afterSignal) && !o.responseStarted);
      expect(failed.filter((o) => !refusedBeforeAcceptance(o))).toEqual([]);

      // Postgres says which requests the server accepted: each one is a contact.
      const db = new DataSource({ type: 'postgres', url: suite.env().config.databaseUrl });
      await db.initialize();
      try {
        const rows = await db.query<{ email: string }[]>(`SELECT email FROM contacts WHERE email LIKE '%@load.example.com'`);
        const stored = new Set(rows.map((r) => r.email));
        // Every answered request was written; every written request was answered (none lost after acceptance).
        expect(answered.filter((o) => !stored.has(o.email))).toEqual([]);
        const answeredEmails = new Set(answered.map((o) => o.email));
        expect([...stored].filter((email) => !answeredEmails.has(email))).toEqual([]);
        expect(stored.size).toBe(answered.length);
      } finally {
        await db.destroy();
      }
    }, 120_000);
  });

  describe('the API with a request held inside its handler', () => {
    const suite = keyedApiSuite();

    /** POST /v1/track with our own request id; answers the status, the echoed id and the body. */
    async function track(
      port: number,
      email: string,
      requestId: string,
    ): Promise<{ status: number; requestId: string | null; body: unknown }> {
      const res = await fetch(`http://127.0.0.1:${port}/v1/track`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/json', 'X-Request-Id': requestId },
        body: JSON.stringify({ email, event: 'ops.held', data: { plan: 'pro' } }),
      });
      return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() };
    }

    it('answers 200 and stores a request held by a Postgres lock across SIGTERM; the logged request ids are the answered ones', async () => {
      const port = await freePort();
      const api = await suite.start(port);
      const email = `held-${randomUUID().slice(0, 8)}@hold.example.com`;
      const answers = [
        await track(port, email, randomUUID()),
        await track(port, `before-${randomUUID().slice(0, 8)}@hold.example.com`, randomUUID()),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200]);

      // The test holds the contact's row lock: the next track of that contact (an upsert of its data)
      // waits inside its handler, on Postgres, until the lock is released.
      const db = new DataSource({ type: 'postgres', url: suite.env().config.databaseUrl });
      await db.initialize();
      const lock = db.createQueryRunner();
      try {
        await lock.connect();
        await lock.startTransaction();
        await lock.query(`SELECT id FROM contacts WHERE lower(email) = $1 FOR UPDATE`, [email]);
        const heldId = randomUUID();
        const held = track(port, email, heldId);
        // Positive signal that the request is mid-handler: a backend of the app waits on a lock.
        await waitForLockWaiter(db, 'the held request waiting on the row lock');
        api.child.kill('SIGTERM');
        // The server got the signal while the request is held: its listener is closed.
        await waitFor(
          async () => ((await connectionRefused(`http://127.0.0.1:${port}`)) ? true : null),
          20_000,
          'the listener to close after SIGTERM',
        );
        await lock.commitTransaction();
        const heldAnswer = await held;
        expect(heldAnswer).toMatchObject({ status: 200, requestId: heldId, body: { success: true } });
        answers.push(heldAnswer);
        const exit = await Promise.race([api.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), GRACE_MS))]);
        expect(exit).toEqual({ code: null, signal: 'SIGTERM' });

        // Stored: the held request's event is in Postgres.
        const events = await db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM events e JOIN contacts c ON c.id = e.contact_id WHERE lower(c.email) = $1 AND e.name = 'ops.held'`,
          [email],
        );
        expect(events[0].n).toBe(2);
      } finally {
        if (lock.isTransactionActive) await lock.rollbackTransaction();
        await lock.release();
        await db.destroy();
      }
      // The server's request log names exactly the requests that were answered, the held one included.
      const logged = api
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { reqId?: string; req?: { url?: string } })
        .filter((line) => line.reqId && line.req?.url === '/v1/track')
        .map((line) => line.reqId);
      expect(logged.sort()).toEqual(answers.map((a) => a.requestId).sort());
    }, 90_000);
  });

  describe('a worker mid-batch', () => {
    const DOMAIN = 'shutdown.example.com';
    const IN_FLIGHT = 6;
    let t: MailTestApp;
    let sink: SmtpSink;
    let db: DataSource;
    let projectId: string;
    const workers: WorkerProcess[] = [];

    beforeAll(async () => {
      sink = await startSmtpSink();
      t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url } }); // the producer side; no worker in process
      db = t.app.get(DataSource);
      projectId = (await createProject(t)).id;
      await insertVerifiedDomain(db, projectId, DOMAIN);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
    });
    afterAll(async () => {
      await t?.close();
      await sink?.close();
    });

    function startWorker(name: string): WorkerProcess {
      const worker = startWorkerProcess(
        name,
        workerEnv(t.config, {
          MAIL_SEND_CONCURRENCY: String(IN_FLIGHT),
          // As many pooled connections as concurrent jobs: all IN_FLIGHT sends are held at once. With the
          // default pool of 5 the sixth DATA came only after the first five were answered, and the count of
          // SENDING rows at that moment raced their SENT commits.
          MAIL_SMTP_POOL_SIZE: String(IN_FLIGHT),
          MAIL_WORKER_METRICS_PORT: '0',
          MAIL_RATE_PER_SECOND: '1000',
        }),
      );
      workers.push(worker);
      return worker;
    }

    /** The worker's metrics server, from its log line (port 0: the system picked one). */
    function metricsUrl(worker: WorkerProcess): string {
      const match = /worker metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(worker.output());
      if (!match) throw new Error(`no metrics line in:\n${worker.output()}`);
      return match[1];
    }

    async function completedJobs(base: string): Promise<number> {
      const text = await (await fetch(`${base}/metrics`)).text();
      return parsePrometheusText(text)
        .filter((s) => s.name === 'bullmq_job_duration_seconds_count' && s.labels.queue === EMAIL_QUEUE && s.labels.outcome === 'completed')
        .filter((s) => s.labels.name === MailEmailJob.Deliver)
        .reduce((sum, s) => sum + s.value, 0);
    }

    it('finishes the sends it started, leaves the rest queued, and a second worker sends each email exactly once', async () => {
      const a = startWorker('A');
      await a.ready;
      const base = metricsUrl(a);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });

      // The relay holds its answer to the first DATA transfers: that many sends are in flight at SIGTERM.
      sink.delayNextData(1500, IN_FLIGHT);
      const dataBefore = sink.stats.dataReceived;
      const ids = await insertEmails(
        db,
        projectId,
        Array.from({ length: 40 }, (_, i) => ({ subject: `batch ${i}` })),
        { from: `ops@${DOMAIN}` },
      );
      await t.app.get(EmailDeliveryQueue).enqueue(ids.map((id) => ({ id, projectId, priority: MailEmailPriority.Transactional })));
      await waitFor(() => (sink.stats.held >= IN_FLIGHT ? true : null), 20_000, 'sends in flight');
      expect(sink.stats.dataReceived - dataBefore).toBe(IN_FLIGHT);
      const inFlight = (await emailRows(db, ids)).filter((r) => r.status === 'SENDING').map((r) => r.id);
      expect(inFlight.length).toBeGreaterThanOrEqual(IN_FLIGHT);

      const exit = await a.kill('SIGTERM');
      expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
      // At the moment of exit: what A had started is finished (SENT), nothing is left half-done.
      const atExit = await emailRows(db, ids);
      expect(atExit.filter((r) => inFlight.includes(r.id) && r.status !== 'SENT')).toEqual([]);
      expect(atExit.filter((r) => r.status !== 'SENT' && r.status !== 'QUEUED')).toEqual([]);
      const sentByA = atExit.filter((r) => r.status === 'SENT').length;
      expect(sentByA).toBeLessThan(ids.length);
      expect(await t.app.get(QueueService).queue(EMAIL_QUEUE).getJobCounts('active')).toEqual({ active: 0 });

      const b = startWorker('B');
      await b.ready;
      const after = await waitForStatus(db, ids, ['SENT', 'FAILED'], 40_000);
      // Every email sent once, on its first attempt: none was retried, none went out twice.
      expect(after.filter((r) => r.status !== 'SENT' || r.attempts !== 1)).toEqual([]);
      const messages = sink.messagesFor(ids);
      expect(messages).toHaveLength(ids.length);
      expect(new Set(messages.map((m) => m.messageId)).size).toBe(ids.length);
      // B's own metrics count exactly the jobs it completed: the ones A left.
      expect(await completedJobs(metricsUrl(b))).toBe(ids.length - sentByA);
    }, 90_000);
  });
});
