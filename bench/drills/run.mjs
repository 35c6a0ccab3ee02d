#!/usr/bin/env node
// `npm run drills` (issue #19, 1): scripted fault drills on this machine. Each prints what was expected
// and what happened; the run exits 1 when any drill misses. Drills run against a private Redis and
// (for the Postgres restart) a private embedded Postgres, never the machine's shared ones.
//   DRILLS=campaign-kill,redis-campaign,redis-workflow,postgres-restart,racing-workers,api-kill (default: all)
//   DRILL_CONTACTS (default 3000): the campaign audience.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { freePort } from '../../scripts/lib/probes.mjs';
import {
  api,
  cleanupAll,
  mailEnvironment,
  privatePostgres,
  privateRedis,
  seedAudience,
  sleep,
  smtpSink,
  sql,
  startMailApi,
  startMailWorker,
  verdict,
  waitUntil,
} from './lib.mjs';

const CONTACTS = Number(process.env.DRILL_CONTACTS ?? 3000);
const SHARED_PG = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function workerEnv(env) {
  return { ...env, MAIL_WORKER_METRICS_PORT: String(await freePort()) };
}

/**
 * Every audience address got exactly one message (one Message-ID). `copies` counts the SMTP re-sends
 * of a message the relay had accepted just before a crash (same Message-ID; receivers fold them).
 */
function exactlyOnce(sink, count, prefix = 'drill-') {
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
  return { missing, duplicated, copies, ok: missing === 0 && duplicated === 0 };
}
const described = (r) =>
  `${r.missing} missing, ${r.duplicated} with two different messages, ${r.copies} SMTP re-sends of an accepted message`;

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
    first.child.kill('SIGKILL');
    const atKill = sink.total();
    startMailWorker(await workerEnv({ ...env, MAIL_SEND_LOCK_SECONDS: '5' }), 'worker-2');
    const done = await waitUntil(async () => (await campaignStatus(env, id)) === 'SENT', 240_000, 250);
    const result = exactlyOnce(sink, CONTACTS);
    return verdict(
      'SIGKILL a mail worker mid-campaign',
      `all ${CONTACTS} recipients mailed exactly once, campaign SENT`,
      `killed after ${atKill} sent; campaign ${await campaignStatus(env, id)}; ${described(result)}`,
      done && result.ok,
    );
  },

  /** Redis killed (its data gone) mid-campaign and started again empty: Postgres rebuilds the work. */
  async 'redis-campaign'() {
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({
      pgBase: SHARED_PG,
      redisUrl: redis.url,
      smtpUrl: sink.url,
      extra: { MAIL_CAMPAIGN_SWEEP_SECONDS: '2' },
    });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, CONTACTS);
    startMailWorker(await workerEnv(env));
    const id = await startCampaign(base, from);
    await waitUntil(async () => sink.total() >= CONTACTS / 3, 120_000, 20);
    await redis.kill();
    const atKill = sink.total();
    await sleep(1000);
    await redis.start();
    const done = await waitUntil(async () => (await campaignStatus(env, id)) === 'SENT', 300_000, 250);
    const result = exactlyOnce(sink, CONTACTS);
    return verdict(
      'restart Redis (empty) mid-campaign',
      `all ${CONTACTS} recipients mailed exactly once, campaign SENT`,
      `Redis lost after ${atKill} sent; campaign ${await campaignStatus(env, id)}; ${described(result)}`,
      done && result.ok,
    );
  },

  /** Redis killed while executions wait in a DELAY: every execution still sends its one email. */
  async 'redis-workflow'() {
    const redis = await privateRedis();
    const sink = await smtpSink();
    const env = await mailEnvironment({
      pgBase: SHARED_PG,
      redisUrl: redis.url,
      smtpUrl: sink.url,
      extra: { MAIL_WORKFLOW_SWEEP_SECONDS: '2' },
    });
    const base = await startMailApi(env);
    const { from } = await seedAudience(env, 0);
    startMailWorker(await workerEnv(env));
    const template = await api(base, 'POST', '/templates', { name: 'wf', subject: 'Welcome {{email}}', body: '<p>hi</p>', from });
    await api(base, 'POST', '/workflows', {
      name: 'drill',
      eventName: 'signed_up',
      enabled: true,
      steps: [
        { id: 'wait', type: 'DELAY', config: { amount: 4, unit: 'seconds' }, next: 'send' },
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
    await sleep(1000);
    await redis.kill();
    await sleep(1000);
    await redis.start();
    await waitUntil(async () => sink.total() >= count, 120_000, 250);
    await sleep(3000); // would a step run twice, its second email arrives now
    const result = exactlyOnce(sink, count, 'wf-');
    const [{ completed }] = await sql(
      env.MAIL_DATABASE_URL,
      `SELECT count(*)::int AS completed FROM workflow_executions WHERE status = 'COMPLETED'`,
    );
    return verdict(
      'restart Redis (empty) while workflow executions wait in a DELAY',
      `${count} executions COMPLETED, each contact mailed exactly once`,
      `${completed} COMPLETED; ${described(result)}`,
      result.ok && completed === count,
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
    const load = autocannon({
      url: base.url,
      connections: 50,
      duration: 20,
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
    load.on('response', (_c, status) => (statuses[status] = (statuses[status] ?? 0) + 1));
    await sleep(5000);
    await postgres.stop();
    await sleep(3000);
    await postgres.start();
    const result = await new Promise((resolve) => load.on('done', resolve));
    const unclean = Object.keys(statuses).filter((s) => !(Number(s) < 300 || Number(s) >= 500));
    const [partial] = await sql(
      env.MAIL_DATABASE_URL,
      `SELECT count(*)::int AS n FROM (SELECT subject FROM emails GROUP BY 1 HAVING count(*) <> 3) x`,
    );
    const ok = result.errors === 0 && result.timeouts === 0 && unclean.length === 0 && partial.n === 0 && (statuses[200] ?? 0) > 0;
    return verdict(
      'restart Postgres under HTTP load (POST /v1/send, 3 recipients each)',
      'every answer 2xx or a clean 5xx (no reset, no timeout); every stored send has all 3 emails; sends succeed again after the restart',
      `statuses ${JSON.stringify(statuses)}, ${result.errors} socket errors, ${result.timeouts} timeouts; ${partial.n} partial sends`,
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
    const done = await waitUntil(async () => (await campaignStatus(env, id)) === 'SENT', 240_000, 250);
    const result = exactlyOnce(sink, CONTACTS);
    return verdict(
      'two workers racing on one queue',
      `all ${CONTACTS} recipients mailed exactly once`,
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
    const pump = (async () => {
      while (!stop) {
        const subject = `kill-${++n}`;
        inFlight.push(
          fetch(`${base.url}/v1/send`, {
            method: 'POST',
            headers: base.headers,
            body: JSON.stringify({ from, to, subject, body: '<p>b</p>' }),
          })
            .then((r) => ({ subject, status: r.status }))
            .catch(() => ({ subject, status: 'reset' })),
        );
        await sleep(5);
      }
    })();
    const countStored = async () => (await sql(env.MAIL_DATABASE_URL, `SELECT count(DISTINCT subject)::int AS n FROM emails`))[0].n;
    await waitUntil(async () => (await countStored()) >= 10, 60_000, 10);
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
      'every stored send has all 50 emails; every send answered 200 is stored',
      `${answered.length} answered 200, ${outcomes.filter((o) => o.status === 'reset').length} cut off, ${perSubject.size} stored; ${partial} partial, ${lost} answered but lost`,
      partial === 0 && lost === 0 && perSubject.size > 0,
    );
  },
};

const selected = (process.env.DRILLS ?? Object.keys(DRILLS).join(',')).split(',').map((s) => s.trim());
let failed = 0;
for (const name of selected) {
  const drill = DRILLS[name];
  if (!drill) throw new Error(`unknown drill ${name}`);
  try {
    if (!(await drill())) failed += 1;
  } catch (err) {
    verdict(name, 'the drill runs', `it failed: ${err.stack ?? err}`, false);
    failed += 1;
  } finally {
    await cleanupAll();
  }
}
console.log(`\n${selected.length - failed}/${selected.length} drills passed`);
process.exit(failed > 0 ? 1 : 0);
