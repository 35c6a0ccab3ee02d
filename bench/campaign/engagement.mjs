#!/usr/bin/env node
// Engagement analytics benchmark (issue #31), run after a build: `node bench/campaign/engagement.mjs`
// (bench/campaign.mjs runs it as its `engagement` part).
//
// A fresh database (migrated by the mail-api's own command) and the compiled API (production settings).
// Seeded set-based in the bootstrap project: BENCH_ENGAGEMENT_RECIPIENTS contacts (default 100,000), one
// SENT campaign with an email per contact (each row holding 1.6 KB of rendered HTML, as sent emails do),
// and BENCH_ENGAGEMENT_EVENTS opens and clicks of it (default 300,000: three per email, a mix of people
// and machines over eight links); the emails' first opens and clicks and the per-link counters are then
// derived from those events by the same rules the app keeps (a person's/machine's first open and
// click; clicks, unique person clickers, machine clicks per link). Timed over HTTP, median (p50) of
// BENCH_ENGAGEMENT_RUNS (default 21) after a warm-up, one request at a time:
//   - GET /campaigns/{id}/stats   target < 200 ms p50
//   - GET /campaigns/{id}/links   target < 200 ms p50
//   - GET /segments/{id} of a DYNAMIC segment `campaign.<id> notOpened` (its live memberCount)
//                                 target < 500 ms p50
// Prints each with `met` or `MISSED`, and the EXPLAIN (ANALYZE, BUFFERS) of the three statements.
//
// Knobs: BENCH_ENGAGEMENT_RECIPIENTS, BENCH_ENGAGEMENT_EVENTS (a multiple of the recipients is spread
// evenly), BENCH_ENGAGEMENT_RUNS, MAIL_DATABASE_URL (server), REDIS_URL. Always stops the API and drops
// the database. Writes bench/results/campaign-engagement.json.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../scripts/lib/apps.mjs';
import { writeBenchResult } from '../lib/results.mjs';
import { fail, runBenchScript } from '../lib/run-script.mjs';
import { benchEnvironment, verdict, withClient } from './lib.mjs';

const RECIPIENTS = Number(process.env.BENCH_ENGAGEMENT_RECIPIENTS ?? 100_000);
const EVENTS = Number(process.env.BENCH_ENGAGEMENT_EVENTS ?? 300_000);
const RUNS = Number(process.env.BENCH_ENGAGEMENT_RUNS ?? 21);
const TARGETS = { stats: 200, links: 200, notOpenedSegment: 500 };
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'campaign-engagement.json');
const CONDITION_MODULE = path.join(REPO_ROOT, 'apps', 'mail-api', 'dist', 'modules', 'segments', 'segment-condition.js');

const bench = benchEnvironment('campaign_engagement');

/** The campaign, its emails (one per contact) and the opens and clicks; ids of what was made. */
async function seed(c, projectId) {
  await c.query(
    `INSERT INTO contacts (project_id, email) SELECT $1, 'r' || g || '@readers.example' FROM generate_series(1, $2::int) AS g`,
    [projectId, RECIPIENTS],
  );
  const campaign = await c.query(
    `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status, sent_at, completed_at, snapshot_at, total_recipients)
     VALUES ($1, 'Engagement bench', 'News', '<p>News</p>', 'news@bench.example.com', 'ALL', 'SENT', now() - interval '2 days',
             now() - interval '2 days', now() - interval '2 days', $2)
     RETURNING id`,
    [projectId, RECIPIENTS],
  );
  const campaignId = campaign.rows[0].id;
  await c.query(
    `INSERT INTO emails (project_id, campaign_id, contact_id, type, to_email, from_email, subject, html, status, sent_at, queued_at)
     SELECT $1, $2, id, 'MARKETING', email, 'news@bench.example.com', 'News', repeat(md5(email), 50), 'SENT',
            now() - interval '2 days', now() - interval '2 days'
       FROM contacts WHERE project_id = $1`,
    [projectId, campaignId],
  );
  // Event k of email n (k = 0..perEmail-1): an open first; then clicks on one of 8 links. Machines:
  // the first open of 2 in 5 emails (a proxy), clicks of 1 in 3 (a scanner), every 4th event (a burst).
  const perEmail = Math.max(1, Math.round(EVENTS / RECIPIENTS));
  await c.query(
    `INSERT INTO email_engagements (project_id, email_id, campaign_id, kind, url, machine, machine_reason, occurred_at)
     SELECT e.project_id, e.id, e.campaign_id, s.kind, s.url, s.reason IS NOT NULL, s.reason, now() - interval '1 day' + s.k * interval '1 minute'
       FROM (SELECT id, project_id, campaign_id, row_number() OVER (ORDER BY id) AS n FROM emails WHERE campaign_id = $1) e
       CROSS JOIN LATERAL (
         SELECT k, CASE WHEN k = 0 THEN 'OPEN' ELSE 'CLICK' END AS kind,
                CASE WHEN k = 0 THEN NULL ELSE 'https://shop.example/item/' || ((e.n + k) % 8) END AS url,
                CASE WHEN k = 0 AND e.n % 5 < 2 THEN 'USER_AGENT'
                     WHEN k > 0 AND e.n % 3 = 0 THEN 'USER_AGENT'
                     WHEN (e.n + k) % 4 = 0 THEN 'BURST' END AS reason
           FROM generate_series(0, $2::int - 1) AS k) s`,
    [campaignId, perEmail],
  );
  await deriveFromEvents(c, campaignId);
  for (const table of ['contacts', 'emails', 'email_engagements', 'campaign_link_clicks']) await c.query(`VACUUM ANALYZE ${table}`);
  return { campaignId, events: perEmail * RECIPIENTS };
}

/** First opens and clicks of each email, and the per-link counters, as the app derives them from the events. */
async function deriveFromEvents(c, campaignId) {
  await c.query(
    `UPDATE emails e
        SET opened_at = f.opened_at, clicked_at = f.clicked_at, machine_opened_at = f.machine_opened_at, machine_clicked_at = f.machine_clicked_at
       FROM (SELECT email_id,
                    min(occurred_at) FILTER (WHERE NOT machine) AS opened_at,
                    min(occurred_at) FILTER (WHERE NOT machine AND kind = 'CLICK') AS clicked_at,
                    min(occurred_at) FILTER (WHERE machine) AS machine_opened_at,
                    min(occurred_at) FILTER (WHERE machine AND kind = 'CLICK') AS machine_clicked_at
               FROM email_engagements WHERE campaign_id = $1 GROUP BY email_id) f
      WHERE e.id = f.email_id`,
    [campaignId],
  );
  await c.query(
    `INSERT INTO campaign_link_clicks (project_id, campaign_id, url, clicks, unique_clicks, machine_clicks)
     SELECT project_id, campaign_id, url, count(*), count(DISTINCT email_id) FILTER (WHERE NOT machine), count(*) FILTER (WHERE machine)
       FROM email_engagements WHERE campaign_id = $1 AND kind = 'CLICK'
      GROUP BY project_id, campaign_id, url`,
    [campaignId],
  );
}

/** Median (p50) and spread of `runs` timed calls, after one warm-up. */
async function timed(runs, call) {
  let last = await call();
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    last = await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p90: at(0.9), min: times[0], max: times[times.length - 1], last };
}

async function explain(c, sql, params) {
  const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
  return rows.map((r) => r['QUERY PLAN']);
}

/** The statements behind the three answers, as the app runs them (same texts), for their plans. */
async function plans(c, projectId, campaignId, compileCondition) {
  const params = [projectId];
  const predicate = compileCondition(notOpened(campaignId), 'c', params, { projectParam: '$1' });
  await c.query('SET jit = off');
  return {
    stats: await explain(
      c,
      `SELECT count(*) FILTER (WHERE status = 'SENT') AS delivered, count(*) FILTER (WHERE bounced_at IS NOT NULL) AS bounced,
              count(*) FILTER (WHERE opened_at IS NOT NULL) AS opened, count(*) FILTER (WHERE clicked_at IS NOT NULL) AS clicked,
              count(*) FILTER (WHERE machine_opened_at IS NOT NULL) AS m_opened, count(*) FILTER (WHERE machine_clicked_at IS NOT NULL) AS m_clicked
         FROM emails WHERE campaign_id = $2 AND project_id = $1`,
      [projectId, campaignId],
    ),
    links: await explain(
      c,
      `SELECT url, clicks, unique_clicks, machine_clicks FROM campaign_link_clicks WHERE project_id = $1 AND campaign_id = $2 ORDER BY clicks DESC, url COLLATE "C"`,
      [projectId, campaignId],
    ),
    notOpenedSegment: await explain(c, `SELECT count(*)::int AS n FROM contacts c WHERE c.project_id = $1 AND ${predicate}`, params),
  };
}

const notOpened = (campaignId) => ({ logic: 'AND', groups: [{ filters: [{ field: `campaign.${campaignId}`, operator: 'notOpened' }] }] });

async function main() {
  const { compileCondition } = await import(pathToFileURL(CONDITION_MODULE).href).catch(() =>
    fail(`build first (npm run build): missing ${path.relative(REPO_ROOT, CONDITION_MODULE)}`),
  );
  await bench.checkPrerequisites();
  await bench.startSink();
  await bench.prepareDatabase();
  const projectId = await bench.startApi();
  const seedStarted = Date.now();
  const { campaignId, events } = await withClient(bench.databaseUrl, (c) => seed(c, projectId));
  console.log(
    `bench: seeded ${RECIPIENTS} recipients and ${events} opens and clicks in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`,
  );

  const segment = await bench.api('POST', '/segments', { name: 'Did not open', type: 'DYNAMIC', condition: notOpened(campaignId) });
  const results = {
    stats: await timed(RUNS, () => bench.api('GET', `/campaigns/${campaignId}/stats`)),
    links: await timed(RUNS, () => bench.api('GET', `/campaigns/${campaignId}/links`)),
    notOpenedSegment: await timed(RUNS, () => bench.api('GET', `/segments/${segment.id}`)),
  };
  const explained = await withClient(bench.databaseUrl, (c) => plans(c, projectId, campaignId, compileCondition));
  for (const [name, plan] of Object.entries(explained)) {
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) behind ${name}:`);
    for (const line of plan) console.log(`  ${line}`);
  }
  const stats = results.stats.last.data;
  console.log(
    `\nstats: ${JSON.stringify(stats)}\nlinks: ${results.links.last.data.items.length} links; segment notOpened memberCount ${results.notOpenedSegment.last.memberCount}`,
  );
  const summary = {};
  for (const [name, r] of Object.entries(results)) {
    const met = r.p50 < TARGETS[name];
    summary[name] = { p50Ms: r.p50, p90Ms: r.p90, minMs: r.min, maxMs: r.max, targetMs: TARGETS[name], met };
    console.log(
      `bench: ${name} p50 ${r.p50.toFixed(1)} ms (p90 ${r.p90.toFixed(1)}, min ${r.min.toFixed(1)}; target < ${TARGETS[name]} ms: ${verdict(met)})`,
    );
  }
  writeBenchResult(RESULTS_FILE, { results: summary, stats, plans: explained }, { recipients: RECIPIENTS, events, runs: RUNS });
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

await runBenchScript('campaign-engagement', main, bench.cleanup);
