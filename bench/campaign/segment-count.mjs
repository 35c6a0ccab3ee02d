#!/usr/bin/env node
// Segment count benchmark, run after a build: `node bench/campaign/segment-count.mjs` (bench/campaign.mjs
// runs it too).
//
// A fresh database `mail_bench_segments` (migrated by the mail-api's own `migrate` command) is seeded
// set-based (generate_series) with BENCH_SEGMENT_CONTACTS contacts (default 100,000) in one project and
// BENCH_SEGMENT_EVENTS events (default 1,000,000) over the last year, plus a second project of 10% that
// size. Then the live `memberCount` of a DYNAMIC segment, `event.email.opened triggeredWithin 30 days`
// AND `data.plan equals "pro"`, compiled by the app's own segment-condition.js, is timed (median of
// BENCH_SEGMENT_RUNS, default 7, after a warm-up) against the plain `SELECT count(*) FROM contacts
// WHERE project_id = $1` baseline in the same run, both without JIT as the app runs them. Target: under
// 500 ms. Prints both, their ratio, the EXPLAIN (ANALYZE, BUFFERS) of the segment count, and the
// indexes each kind of filter's plan uses.
//
// Knobs: BENCH_SEGMENT_CONTACTS, BENCH_SEGMENT_EVENTS, BENCH_SEGMENT_RUNS, MAIL_DATABASE_URL (server),
// BENCH_SEGMENT_KEEP_DB=1 (keep the seeded database to study plans; drop it by hand). Else always drops
// the database. Writes bench/results/segment-count.json.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, missingEntryPoints, runMigrate, stopProcesses, withDatabase } from '../../scripts/lib/apps.mjs';
import { dropDatabase, withSqlClient } from '../../scripts/lib/databases.mjs';
import { writeBenchResult } from '../lib/results.mjs';
import { fail, runBenchScript } from '../lib/run-script.mjs';

const CONTACTS = Number(process.env.BENCH_SEGMENT_CONTACTS ?? 100_000);
const EVENTS = Number(process.env.BENCH_SEGMENT_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_SEGMENT_RUNS ?? 7);
const TARGET_MS = 500;
const DATABASE = 'mail_bench_segments';
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'segment-count.json');
const CONDITION_MODULE = path.join(REPO_ROOT, 'apps', 'mail-api', 'dist', 'modules', 'segments', 'segment-condition.js');

const baseUrl = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/mail';
const databaseUrl = withDatabase(baseUrl, DATABASE);
const children = [];

const SEGMENT = {
  logic: 'AND',
  groups: [
    {
      filters: [
        { field: 'event.email.opened', operator: 'triggeredWithin', value: 30, unit: 'days' },
        { field: 'data.plan', operator: 'equals', value: 'pro' },
      ],
    },
  ],
};

/** One filter per kind, for the "which index does it use" table. */
const PROBES = [
  ['email equals', { field: 'email', operator: 'equals', value: 'user42@example.com' }],
  ['email contains', { field: 'email', operator: 'contains', value: 'er4242' }],
  ['subscribed equals', { field: 'subscribed', operator: 'equals', value: false }],
  ['createdAt within 2 days', { field: 'createdAt', operator: 'within', value: 2, unit: 'days' }],
  ['createdAt gt', { field: 'createdAt', operator: 'gt', value: new Date(Date.now() - 7 * 86_400_000).toISOString() }],
  ['data equals (rare value)', { field: 'data.plan', operator: 'equals', value: 'enterprise' }],
  ['data equals (common value)', { field: 'data.plan', operator: 'equals', value: 'pro' }],
  ['data exists (rare key)', { field: 'data.vip', operator: 'exists' }],
  ['data gt (number)', { field: 'data.age', operator: 'gt', value: 70 }],
  ['data contains', { field: 'data.city', operator: 'contains', value: 'ber' }],
  ['data within (date value)', { field: 'data.signup', operator: 'within', value: 30, unit: 'days' }],
  ['event triggered (rare)', { field: 'event.purchase', operator: 'triggered' }],
  ['event triggeredWithin 30 days', { field: 'event.email.opened', operator: 'triggeredWithin', value: 30, unit: 'days' }],
  ['event notTriggered', { field: 'event.email.clicked', operator: 'notTriggered' }],
];

/** Whole conditions whose plans join the other way round (few contacts, then a probe per contact). */
const CONDITION_PROBES = [
  [
    'rare data AND event within',
    {
      logic: 'AND',
      groups: [
        {
          filters: [
            { field: 'data.plan', operator: 'equals', value: 'enterprise' },
            { field: 'event.email.opened', operator: 'triggeredWithin', value: 30, unit: 'days' },
          ],
        },
      ],
    },
  ],
  [
    'OR of two groups',
    {
      logic: 'OR',
      groups: [
        { filters: [{ field: 'event.purchase', operator: 'triggered' }] },
        { filters: [{ field: 'data.vip', operator: 'equals', value: true }] },
      ],
    },
  ],
];

const withClient = withSqlClient;

async function prepareDatabase() {
  await dropDatabase(databaseUrl);
  await runMigrate(
    'mail',
    { ...process.env, MAIL_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    { label: 'mail-migrate', track: children },
  );
}

/**
 * Contacts numbered 1..n (`n` in data), ~90% subscribed, plan pro 20% / team 10% / enterprise 0.1% /
 * free, age 0-79, a city, a signup date in the last two years, `vip` on 0.5%; created over two years.
 * Events spread evenly over the contacts (contact g % n), over the last 365 days: email.sent 40%,
 * email.opened 25%, email.clicked 10%, page.view 24.9%, purchase 0.1%.
 */
async function seed(c, projectId, contacts, events) {
  await c.query(
    `INSERT INTO contacts (project_id, email, subscribed, data, created_at)
     SELECT $1, 'user' || g || '@example.com', random() < 0.9,
            jsonb_strip_nulls(jsonb_build_object(
              'n', g,
              'plan', CASE WHEN g % 1000 = 0 THEN 'enterprise' WHEN g % 10 < 2 THEN 'pro' WHEN g % 10 = 2 THEN 'team' ELSE 'free' END,
              'age', g % 80,
              'city', (ARRAY['Berlin', 'Paris', 'Lisbon', 'Oslo', 'Rome'])[1 + g % 5],
              'signup', to_char(now() - (g % 730) * interval '1 day', 'YYYY-MM-DD'),
              'vip', CASE WHEN g % 200 = 0 THEN true END)),
            now() - random() * interval '730 days'
       FROM generate_series(1, $2::int) AS g`,
    [projectId, contacts],
  );
  if (events === 0) return;
  await c.query(
    `INSERT INTO events (project_id, contact_id, name, created_at)
     SELECT $1, ids.id,
            CASE WHEN r < 0.40 THEN 'email.sent' WHEN r < 0.65 THEN 'email.opened' WHEN r < 0.75 THEN 'email.clicked'
                 WHEN r < 0.999 THEN 'page.view' ELSE 'purchase' END,
            now() - random() * interval '365 days'
       FROM (SELECT g, random() AS r FROM generate_series(1, $2::int) AS g) AS e
       JOIN (SELECT id, (data->>'n')::int AS n FROM contacts WHERE project_id = $1) AS ids ON ids.n = 1 + e.g % $3::int`,
    [projectId, events, contacts],
  );
}

async function createProject(c, name) {
  const { rows } = await c.query(
    `INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix)
     VALUES ($1, md5(random()::text), md5(random()::text), 'sk_bench') RETURNING id`,
    [name],
  );
  return rows[0].id;
}

/** Median wall time of `runs` executions (after one warm-up), in ms. */
async function timeQuery(c, sql, params, runs) {
  await c.query(sql, params);
  const times = [];
  let result;
  for (let i = 0; i < runs; i += 1) {
    const start = process.hrtime.bigint();
    result = await c.query(sql, params);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((x, y) => x - y);
  return { ms: times[Math.floor(times.length / 2)], min: times[0], max: times[times.length - 1], rows: result.rows };
}

/** The statement of SegmentsRepository.countMembers: the project id is $1, and named as such to the compiler. */
function countSql(compile, condition, projectId) {
  const params = [projectId];
  const predicate = compile(condition, 'c', params, { projectParam: '$1' });
  return { sql: `SELECT count(*)::int AS n FROM contacts c WHERE c.project_id = $1 AND ${predicate}`, params };
}

async function explain(c, sql, params) {
  const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
  return rows.map((r) => r['QUERY PLAN']);
}

const indexesIn = (plan) => [...new Set(plan.join('\n').match(/(?<=using )\w+|(?<=on )\w+_(?:idx|uq|pkey)\b/gi) ?? [])];

async function main() {
  const missing = missingEntryPoints(['mail'], ['migrate']);
  if (missing.length) fail(`build first (npm run build): missing ${missing.join(', ')}`);
  const { compileCondition, compileFilter } = await import(pathToFileURL(CONDITION_MODULE).href).catch(() =>
    fail(`build first (npm run build): missing ${path.relative(REPO_ROOT, CONDITION_MODULE)}`),
  );
  await prepareDatabase();
  await withClient(databaseUrl, async (c) => {
    const projectId = await createProject(c, 'Bench');
    const otherId = await createProject(c, 'Other');
    let start = Date.now();
    await seed(c, projectId, CONTACTS, EVENTS);
    await seed(c, otherId, Math.ceil(CONTACTS / 10), Math.ceil(EVENTS / 10));
    await c.query('VACUUM ANALYZE contacts');
    await c.query('VACUUM ANALYZE events');
    console.log(
      `seeded ${CONTACTS} + ${Math.ceil(CONTACTS / 10)} contacts, ${EVENTS} + ${Math.ceil(EVENTS / 10)} events in ${Date.now() - start} ms`,
    );

    // As the app reads segments (SegmentsRepository.disableJit says why).
    await c.query('SET jit = off');
    start = Date.now();
    const baseline = await timeQuery(c, 'SELECT count(*)::int AS n FROM contacts WHERE project_id = $1', [projectId], RUNS);
    const segment = countSql(compileCondition, SEGMENT, projectId);
    const counted = await timeQuery(c, segment.sql, segment.params, RUNS);
    const ratio = counted.ms / baseline.ms;
    const plan = await explain(c, segment.sql, segment.params);

    const probes = [];
    const allProbes = [
      ...PROBES.map(([label, filter]) => [label, compileFilter, filter]),
      ...CONDITION_PROBES.map(([l, c]) => [l, compileCondition, c]),
    ];
    for (const [label, compile, filter] of allProbes) {
      const probe = countSql(compile, filter, projectId);
      const probePlan = await explain(c, probe.sql, probe.params);
      const time = probePlan.find((line) => line.startsWith('Execution Time'));
      probes.push({ label, indexes: indexesIn(probePlan), executionTime: time?.replace('Execution Time: ', '') });
    }

    console.log('\nEXPLAIN (ANALYZE, BUFFERS) of the segment count:');
    for (const line of plan) console.log(`  ${line}`);
    console.log('\nIndexes per filter kind (EXPLAIN ANALYZE of a count with that one filter):');
    for (const p of probes)
      console.log(`  ${p.label.padEnd(32)} ${String(p.executionTime).padStart(12)}  ${p.indexes.join(', ') || 'seq scan only'}`);
    console.log(
      `\nbaseline  SELECT count(*) FROM contacts WHERE project_id=$1: ${baseline.ms.toFixed(1)} ms (median of ${RUNS}; ${baseline.rows[0].n} contacts)`,
    );
    console.log(
      `segment   event.email.opened triggeredWithin 30 days AND data.plan = "pro": ${counted.ms.toFixed(1)} ms (median of ${RUNS}; min ${counted.min.toFixed(1)}, max ${counted.max.toFixed(1)}; ${counted.rows[0].n} members)`,
    );
    console.log(`bench: segment count / baseline count = ${ratio.toFixed(2)}x`);
    console.log(
      `bench: segment count ${counted.ms.toFixed(1)} ms (target < ${TARGET_MS} ms: ${counted.ms < TARGET_MS ? 'met' : 'MISSED'})`,
    );

    writeBenchResult(
      RESULTS_FILE,
      {
        baselineMs: baseline.ms,
        segmentMs: counted.ms,
        ratio,
        members: counted.rows[0].n,
        targetMs: TARGET_MS,
        met: counted.ms < TARGET_MS,
        plan,
        probes,
        measuredIn: Date.now() - start,
      },
      { contacts: CONTACTS, events: EVENTS, runs: RUNS },
    );
  });
}

async function cleanup() {
  await stopProcesses(children);
  if (process.env.BENCH_SEGMENT_KEEP_DB === '1') return console.log(`kept database ${DATABASE}`);
  await dropDatabase(databaseUrl).catch((err) => console.error(`segment-count: could not drop ${DATABASE}: ${err.message}`));
}

await runBenchScript('segment-count', main, cleanup);
