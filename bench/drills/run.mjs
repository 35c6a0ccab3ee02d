#!/usr/bin/env node
// `npm run drills` (issue #19, 1): scripted fault drills on this machine. Each prints what was expected
// and what happened; the run exits 1 when any drill misses. Drills run against a private Redis and
// (for the Postgres restart) a private embedded Postgres, never the machine's shared ones.
//   DRILLS=campaign-kill,redis-campaign,redis-workflow,postgres-restart,racing-workers,api-kill (default: all)
//   DRILL_CONTACTS (default 3000): the campaign audience.
// Writes every verdict, with the drill's time, to bench/results/drills.json (DRILLS_RESULTS_FILE: another path).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from '../../scripts/lib/probes.mjs';
import { writeBenchResult } from '../lib/results.mjs';
import {
  api,
  cleanupAll,
  emailProgress,
  mailEnvironment,
  privatePostgres,
  privateRedis,
  seedAudience,
  settled,
  sleep,
  smtpSink,
  sql,
  startMailApi,
  startMailWorker,
  verdict,
  verdicts,
  waitUntil,
} from './lib.mjs';

const CONTACTS = Number(process.env.DRILL_CONTACTS ?? 3000);
const RESULTS_FILE = process.env.DRILLS_RESULTS_FILE ?? fileURLToPath(new URL('../results/drills.json', import.meta.url));
const SHARED_PG = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Postgres restart drill: requests sent after the restart that must all succeed before the load stops. */
const RECOVERY_REQUESTS = 200;

async function workerEnv(env) {
  return { ...env, MAIL_WORKER_METRICS_PORT: String(await freePort()) };
}

/**
 * Every audience address got exactly one message (one Message-ID), and at most `maxCopies` SMTP
 * re-sends of a message the relay had accepted (same Message-ID; receivers fold them, but a pipeline
 * that sent everything twice must not pass): 0 where no process died, at most the sends in flight at
 * the kill where one did.
 */
function exactlyOnce(sink, count, maxCopies, prefix = 'drill-') {
  let missing = 0;
  let duplicated = 0;
  let copies = 0;
  for (let i = 1; i <= count; i++) {
    const address = `${prefix}${i}@example.com`;
    const n = sink.perRecipient.get(address)?.size ?? 0;
    if (n === 0) missing += 1;
    if (n > 1) duplicated += 1;
    copies += Math.max(0, (sink.copies.get(address) ?? 0) - 1);
  }
  return { missing, duplicated, copies, maxCopies, ok: missing === 0 && duplicated === 0 && copies <= maxCopies };
}
const described = (r) =>
  `${r.missing} missing, ${r.duplicated} with two different messages, ${r.copies} SMTP re-sends of an accepted message (at most ${r.maxCopies} allowed)`;

/**
 * Lands the fault mid-run: holds the sink's DATA answers until a send is waiting on one, then checks
 * that recipients are still unsent. Answers what it saw, for the verdict.
 */
async function midSend(env, sink, audience) {
  sink.hold();
  const holding = await waitUntil(async () => sink.held() >= 1, 30_000, 5);
  const progress = await emailProgress(env);
  const unsent = audience - sink.total();
  return {
    ok: holding && unsent > 0,
    text: `${sink.held()} sends held mid-SMTP, ${unsent} recipients unsent (${progress.sending} rows SENDING)`,
  };
}

/** The positive signal before asserting absence: the campaign SENT, every email final, queues drained. */
async function campaignSettled(env, id, timeoutMs) {
  return waitUntil(async () => (await campaignStatus(env, id)) === 'SENT' && (await settled(env)), timeoutMs, 250);
}

async function campaignStatus(env, id) {
  const [row] = await sql(env.MAIL_DATABASE_URL, `SELECT status FROM campaigns WHERE id = $1`, [id]);
  return row?.status;
}

async function startCampaign(base, from) {
  const created = await api(base, 'POST', '/campaigns', {
    name: 'drill',
    subject: 'Drill {{email}}',
    body: '<p>drill</p>',
    from,
    audienceType: 'ALL',
  });
  await api(base, 'POST', `/campaigns/${created.data.id}/send`, {});
  return created.data.id;
}

/**
 * The setup of the Redis drills: a private Redis (the drill kills it), the SMTP sink, the mail API on
 * them with `extra` (a short sweep), `contacts` seeded with a verified sender, and one mail worker.
 */
async function onPrivateRedis(extra, contacts) {
  const redis = await privateRedis();
  const sink = await smtpSink();
  const env = await mailEnvironment({ pgBase: SHARED_PG, redisUrl: redis.url, smtpUrl: sink.url, extra });
  const base = await startMailApi(env);
  const { from } = await seedAudience(env, contacts);
  startMailWorker(await workerEnv(env));
  return { redis, sink, env, base, from };
}

const DRILLS = {
  /** A worker SIGKILLed mid-campaign; a second worker finishes it. */
  async 'campaign-kill'() {
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({ pgBase: SHARED_PG, redisUrl: redis.url, smtpUrl: sink.url });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, CONTACTS);
    const first = startMailWorker(await workerEnv(env), 'worker-1');
    const id = await startCampaign(base, from);
    await waitUntil(async () => sink.total() >= CONTACTS / 4, 120_000, 20);
    const before = await midSend(env, sink, CONTACTS);
    first.child.kill('SIGKILL');
    await first.exited;
    // The dead worker changes nothing now: its SENDING rows are the sends in flight at the kill, the
    // only ones that may go twice (relay accepted, SENT not committed).
    const atKill = await emailProgress(env);
    sink.release();
    startMailWorker(await workerEnv({ ...env, MAIL_SEND_LOCK_SECONDS: '5' }), 'worker-2');
    const done = await campaignSettled(env, id, 240_000);
    const result = exactlyOnce(sink, CONTACTS, atKill.sending);
    return verdict(
      'SIGKILL a mail worker mid-campaign',
      `killed mid-send with recipients unsent; all ${CONTACTS} recipients mailed exactly once, at most the in-flight sends repeated, campaign SENT`,
      `before the kill: ${before.text}; ${atKill.sent} SENT and ${atKill.sending} SENDING at the kill; campaign ${await campaignStatus(env, id)}; ${described(result)}`,
      before.ok && done && result.ok,
    );
  },

  /** Redis killed (its data gone) mid-campaign and started again empty: Postgres rebuilds the work. */
  async 'redis-campaign'() {
    const { redis, sink, env, base, from } = await onPrivateRedis({ MAIL_CAMPAIGN_SWEEP_SECONDS: '2' }, CONTACTS);
    const id = await startCampaign(base, from);
    await waitUntil(async () => sink.total() >= CONTACTS / 3, 120_000, 20);
    const before = await midSend(env, sink, CONTACTS);
    await redis.kill();
    const atKill = sink.total();
    sink.release();
    await sleep(1000);
    await redis.start();
    const done = await campaignSettled(env, id, 300_000);
    // No process of the pipeline died: not one SMTP re-send is allowed.
    const result = exactlyOnce(sink, CONTACTS, 0);
    return verdict(
      'restart Redis (empty) mid-campaign',
      `Redis lost mid-send with recipients unsent; all ${CONTACTS} recipients mailed exactly once, no re-send, campaign SENT`,
      `before the loss: ${before.text}; Redis lost after ${atKill} sent; campaign ${await campaignStatus(env, id)}; ${described(result)}`,
      before.ok && done && result.ok,
    );
  },

  /** Redis killed while executions wait in a DELAY: every execution still sends its one email. */
  async 'redis-workflow'() {
    const { redis, sink, env, base, from } = await onPrivateRedis({ MAIL_WORKFLOW_SWEEP_SECONDS: '2' }, 0);
    const template = await api(base, 'POST', '/templates', { name: 'wf', subject: 'Welcome {{email}}', body: '<p>hi</p>', from });
    await api(base, 'POST', '/workflows', {
      name: 'drill',
      eventName: 'signed_up',
      enabled: true,
      steps: [
        { id: 'wait', type: 'DELAY', config: { amount: 15, unit: 'seconds' }, next: 'send' },
        { id: 'send', type: 'SEND_EMAIL', config: { templateId: template.id }, next: null },
      ],
    });
    const count = 300;
    for (let i = 1; i <= count; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - i + 1) }, (_, k) =>
          api(base, 'POST', '/v1/track', { email: `wf-${i + k}@example.com`, event: 'signed_up' }),
        ),
      );
    }
    // The fault lands mid-run: executions wait in their DELAY, none is done or has mailed (on a loaded
    // machine some may not have started yet: they start after the loss, from what Postgres holds).
    const executions = async () =>
      (
        await sql(
          env.MAIL_DATABASE_URL,
          `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'WAITING')::int AS waiting,
                  count(*) FILTER (WHERE status = 'COMPLETED')::int AS completed FROM workflow_executions`,
        )
      )[0];
    const waiting = await waitUntil(
      async () => {
        const e = await executions();
        return e.waiting >= 1;
      },
      30_000,
      20,
    );
    const atLoss = await executions();
    const sentBefore = sink.total();
    await redis.kill();
    await sleep(1000);
    await redis.start();
    // Positive signal first (every execution COMPLETED, every email final, queues drained), then the
    // absence of a second email: no job is left that could send one.
    const done = await waitUntil(async () => (await executions()).completed === count && (await settled(env)), 120_000, 250);
    const { completed } = await executions();
    const result = exactlyOnce(sink, count, 0, 'wf-');
    return verdict(
      'restart Redis (empty) while workflow executions wait in a DELAY',
      `Redis lost with executions WAITING in their DELAY, none COMPLETED or mailed; ${count} executions COMPLETED, each contact mailed exactly once, no re-send`,
      `before the loss: ${atLoss.total} executions, ${atLoss.waiting} WAITING, ${atLoss.completed} COMPLETED, ${sentBefore} mailed; ${completed} COMPLETED; ${described(result)}`,
      waiting && atLoss.completed === 0 && sentBefore === 0 && done && result.ok && completed === count,
    );
  },

  /** Postgres stopped and started under HTTP load: failures are clean 5xx, no send is half-written. */
  async 'postgres-restart'() {
    const postgres = await privatePostgres();
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({ pgBase: postgres.url, redisUrl: redis.url, smtpUrl: sink.url });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, 0);
    let n = 0;
    const statuses = {};
    // The load runs until enough requests sent after the restart were answered (stopped below); the
    // duration is only a cap. With a fixed 20 s a slow restart could outlast it: no request after the
    // restart, and 'done' emitted before anything listened for it (the runner then exited with 13).
    const load = autocannon({
      url: base.url,
      connections: 50,
      duration: 120,
      timeout: 15,
      requests: [
        {
          method: 'POST',
          path: '/v1/send',
          headers: base.headers,
          setupRequest: (r) => ({
            ...r,
            body: JSON.stringify({
              from,
              to: [`pg-${++n}-a@example.com`, `pg-${n}-b@example.com`, `pg-${n}-c@example.com`],
              subject: `pg-${n}`,
              body: '<p>b</p>',
            }),
          }),
        },
      ],
    });
    // Each answer is filed by when its request was sent (now minus its latency): only requests sent
    // after Postgres is back show recovery, and every one of them must succeed.
    const finished = new Promise((resolve) => load.on('done', resolve));
    let backAt = Infinity;
    const afterBack = {};
    load.on('response', (_c, status, _bytes, latencyMs) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (Date.now() - latencyMs >= backAt) afterBack[status] = (afterBack[status] ?? 0) + 1;
    });
    // The fault lands mid-run: sends have succeeded (a positive signal, not a fixed wait) and the load is still going.
    if (!(await waitUntil(async () => (statuses[200] ?? 0) >= 50, 30_000, 20)))
      throw new Error('no 50 sends answered 200 before the fault');
    const okBefore = statuses[200] ?? 0;
    await postgres.stop();
    await sleep(3000);
    await postgres.start();
    backAt = Date.now();
    const answeredAfterBack = () => Object.values(afterBack).reduce((a, b) => a + b, 0);
    await waitUntil(async () => answeredAfterBack() >= RECOVERY_REQUESTS, 60_000, 50);
    load.stop();
    const result = await finished;
    const unclean = Object.keys(statuses).filter((s) => !(Number(s) < 300 || Number(s) >= 500));
    const [partial] = await sql(
      env.MAIL_DATABASE_URL,
      `SELECT count(*)::int AS n FROM (SELECT subject FROM emails GROUP BY 1 HAVING count(*) <> 3) x`,
    );
    const sentAfter = answeredAfterBack();
    const recovered = sentAfter > 0 && (afterBack[200] ?? 0) === sentAfter;
    const ok = okBefore > 0 && result.errors === 0 && result.timeouts === 0 && unclean.length === 0 && partial.n === 0 && recovered;
    return verdict(
      'restart Postgres under HTTP load (POST /v1/send, 3 recipients each)',
      'sends succeeded before the stop; every answer 2xx or a clean 5xx (no reset, no timeout); every stored send has all 3 emails; every request sent after Postgres is back answers 200',
      `${okBefore} answered 200 before the stop; statuses ${JSON.stringify(statuses)}, ${result.errors} socket errors, ${result.timeouts} timeouts; ${partial.n} partial sends; sent after Postgres was back: ${JSON.stringify(afterBack)}`,
      ok,
    );
  },

  /** Two workers consuming one queue at once: every email exactly once. */
  async 'racing-workers'() {
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({ pgBase: SHARED_PG, redisUrl: redis.url, smtpUrl: sink.url });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, CONTACTS);
    startMailWorker(await workerEnv(env), 'worker-a');
    startMailWorker(await workerEnv(env), 'worker-b');
    const id = await startCampaign(base, from);
    const done = await campaignSettled(env, id, 240_000);
    // No process died: not one SMTP re-send is allowed.
    const result = exactlyOnce(sink, CONTACTS, 0);
    return verdict(
      'two workers racing on one queue',
      `all ${CONTACTS} recipients mailed exactly once, no re-send`,
      `campaign ${await campaignStatus(env, id)}; ${described(result)}`,
      done && result.ok,
    );
  },

  /** The API SIGKILLed while requests are in flight: no send is half-written. */
  async 'api-kill'() {
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({ pgBase: SHARED_PG, redisUrl: redis.url, smtpUrl: sink.url });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, 0);
    const to = Array.from({ length: 50 }, (_, i) => `kill-${randomBytes(2).toString('hex')}-${i}@example.com`);
    // A steady stream of sends, each with its own subject; the kill lands once some are stored, so
    // others are mid-transaction. Each send must be whole (50 emails) or absent, and every 200 stored.
    const inFlight = [];
    let stop = false;
    let n = 0;
    let pending = 0;
    const pump = (async () => {
      while (!stop) {
        const subject = `kill-${++n}`;
        pending += 1;
        inFlight.push(
          fetch(`${base.url}/v1/send`, {
            method: 'POST',
            headers: base.headers,
            body: JSON.stringify({ from, to, subject, body: '<p>b</p>' }),
          })
            .then((r) => ({ subject, status: r.status }))
            .catch(() => ({ subject, status: 'reset' }))
            .finally(() => (pending -= 1)),
        );
        await sleep(5);
      }
    })();
    const countStored = async () => (await sql(env.MAIL_DATABASE_URL, `SELECT count(DISTINCT subject)::int AS n FROM emails`))[0].n;
    await waitUntil(async () => (await countStored()) >= 10, 60_000, 10);
    // The kill lands mid-run: requests are waiting for their answer at that moment.
    const pendingAtKill = pending;
    base.api.child.kill('SIGKILL');
    stop = true;
    await pump;
    const outcomes = await Promise.all(inFlight);
    const perSubject = new Map(
      (await sql(env.MAIL_DATABASE_URL, `SELECT subject, count(*)::int AS n FROM emails GROUP BY 1`)).map((r) => [r.subject, r.n]),
    );
    const partial = [...perSubject.values()].filter((count) => count !== 50).length;
    const answered = outcomes.filter((o) => o.status === 200);
    const lost = answered.filter((o) => !perSubject.has(o.subject)).length;
    return verdict(
      'an API SIGKILLed mid-request (a stream of sends of 50 recipients in flight)',
      'requests in flight at the kill; every stored send has all 50 emails; every send answered 200 is stored',
      `${pendingAtKill} requests in flight at the kill; ${answered.length} answered 200, ${outcomes.filter((o) => o.status === 'reset').length} cut off, ${perSubject.size} stored; ${partial} partial, ${lost} answered but lost`,
      pendingAtKill > 0 && partial === 0 && lost === 0 && perSubject.size > 0,
    );
  },
};

const selected = (process.env.DRILLS ?? Object.keys(DRILLS).join(',')).split(',').map((s) => s.trim());
let failed = 0;
const drills = [];
for (const name of selected) {
  const drill = DRILLS[name];
  if (!drill) throw new Error(`unknown drill ${name}`);
  const started = Date.now();
  const first = verdicts.length;
  let passed = false;
  try {
    passed = Boolean(await drill());
  } catch (err) {
    verdict(name, 'the drill runs', `it failed: ${err.stack ?? err}`, false);
  } finally {
    await cleanupAll();
  }
  if (!passed) failed += 1;
  drills.push({ drill: name, passed, seconds: Math.round((Date.now() - started) / 1000), verdicts: verdicts.slice(first) });
}
console.log(`\n${selected.length - failed}/${selected.length} drills passed`);
writeBenchResult(RESULTS_FILE, { passed: selected.length - failed, of: selected.length, drills }, { drills: selected, contacts: CONTACTS });
console.log(`written: ${RESULTS_FILE}`);
process.exit(failed > 0 ? 1 : 0);
