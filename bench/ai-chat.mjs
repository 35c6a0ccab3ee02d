#!/usr/bin/env node
// AI chat benchmark (`npm run bench:ai`, which builds first). Starts the scripted OpenAI-compatible
// provider of the platform tests (apps/platform-api/test/support/scripted-openai.ts, run by Node's type
// stripping) in this process and platform-api on a fresh database `platform_ai_bench` (dropped at the
// end), the API under an event-loop-delay probe (perf_hooks.monitorEventLoopDelay, read over IPC). Then:
//   1. sequential streamed completions straight to the provider: its own time to first byte (baseline);
//   2. the same number of sequential POST /ai_assistant/ai/chat: time to first byte and to the first
//      `text-delta` event; the overhead is chat's first text-delta minus the provider's first byte (p50,
//      goal < 15 ms);
//   3. BENCH_AI_CONCURRENCY (50) concurrent chats, BENCH_AI_ROUNDS times: the API's largest event-loop
//      delay meanwhile (goal < 50 ms).
// Prints the figures and writes bench/results/ai-chat-latest.json.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { writeBenchResult } from './lib/results.mjs';
import readline from 'node:readline';
import { TextDecoder } from 'node:util';
import {
  APPS,
  REPO_ROOT,
  describeExit,
  entryPoint,
  labelled,
  missingEntryPoints,
  runMigrate,
  stopProcesses,
  withDatabase,
} from '../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase } from '../scripts/lib/databases.mjs';
import { freePort, httpOk, redactUrl, redisPing, sleep, waitUntil } from '../scripts/lib/probes.mjs';
import { formatSummary, profiledEnv, summarizeProfile, takeProfile } from './lib/cpu-profile-summary.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const RUNS = positiveInt('BENCH_AI_RUNS', 100);
const CONCURRENCY = positiveInt('BENCH_AI_CONCURRENCY', 50);
const ROUNDS = positiveInt('BENCH_AI_ROUNDS', 3);
const PROVIDER_DELAY_MS = positiveInt('BENCH_AI_PROVIDER_DELAY_MS', 30);
const OVERHEAD_GOAL_MS = 15;
const STALL_GOAL_MS = 50;
const QUEUE_PREFIX = 'bench-ai';
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'ai-chat-latest.json');
// BENCH_CPU_PROF=<dir>: the API runs under V8's sampling profiler; the self-time summary of the
// concurrent phase is printed and kept in the results (profiling slows it: not for the figures).
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
const PROVIDER_MODULE = path.join(REPO_ROOT, 'apps', 'platform-api', 'test', 'support', 'scripted-openai.ts');

/**
 * Preloaded into the API (`--import`): a 10 ms-resolution event-loop-delay histogram, reset and read
 * by the bench over the IPC channel. The channel is unref'd so it never keeps the API alive.
 */
const PROBE = `
import { monitorEventLoopDelay } from 'node:perf_hooks';
const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
const ms = (ns) => Math.round((ns / 1e6) * 100) / 100;
process.channel?.unref();
process.on('message', (m) => {
  if (m?.probe === 'reset') { h.reset(); process.send({ probe: 'reset' }); }
  if (m?.probe === 'read') process.send({ probe: 'read', maxMs: ms(h.max), p99Ms: ms(h.percentile(99)), p50Ms: ms(h.percentile(50)), meanMs: ms(h.mean) });
});`;

const children = [];
let api;
let databaseUrl;
let redisUrl;
let provider;

function positiveInt(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) fail(`${name} must be a positive integer (got "${process.env[name]}")`);
  return value;
}

/** `node [args] script` with labelled output and, for the API, an IPC channel to the probe. */
function start(label, args, env, ipc = false) {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])] });
  for (const stream of [child.stdout, child.stderr])
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', labelled(label));
  const exited = new Promise((resolve) => {
    child.once('error', (err) => resolve({ code: null, signal: null, error: err }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const proc = { label, child, exited };
  children.push(proc);
  return proc;
}

function probe(command) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the event-loop probe did not answer')), 5000);
    const onMessage = (m) => {
      if (m?.probe !== command) return;
      clearTimeout(timer);
      api.child.off('message', onMessage);
      resolve(m);
    };
    api.child.on('message', onMessage);
    api.child.send({ probe: command });
  });
}

async function startPlatform(env) {
  await runMigrate('platform', env, { track: children });
  const profiled = CPU_PROF_DIR ? profiledEnv(env, CPU_PROF_DIR, 'platform-api') : null;
  api = start(
    'platform-api',
    ['--import', `data:text/javascript,${encodeURIComponent(PROBE)}`, entryPoint('platform', 'api')],
    profiled?.env ?? env,
    true,
  );
  api.profileFile = profiled?.file;
  const url = `http://127.0.0.1:${env.PLATFORM_PORT}`;
  const outcome = await Promise.race([waitUntil(() => httpOk(`${url}/healthz`), 60_000, 200), api.exited]);
  if (outcome !== true) fail(`platform-api ${outcome === false ? 'did not answer /healthz within 60 s' : describeExit(outcome)}`);
  return url;
}

async function login(url, email, password) {
  const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ email, password }) });
  const body = await res.json();
  if (res.status !== 200) fail(`login failed: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** Reads a streamed response to its end: ms to the first byte and to the first chunk containing `marker`. */
async function timeStream(started, res, marker) {
  if (!res.ok) fail(`${res.url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let firstByte = null;
  let firstMarker = null;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now();
    firstByte ??= now - started;
    text += decoder.decode(value, { stream: true });
    if (firstMarker === null && text.includes(marker)) firstMarker = now - started;
  }
  if (firstMarker === null) fail(`${res.url}: no ${marker} in the stream: ${text.slice(0, 300)}`);
  return { firstByteMs: firstByte, firstMarkerMs: firstMarker };
}

function providerCall() {
  const started = performance.now();
  return fetch(`${provider.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    }),
  }).then((res) => timeStream(started, res, '"content":"Hello"'));
}

function chatCall(url, token) {
  const started = performance.now();
  return fetch(`${url}/ai_assistant/ai/chat?agent=auth.access_assistant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  }).then((res) => timeStream(started, res, '"type":"text-delta"'));
}

/** An authenticated request that reads nothing from Postgres: the floor of any chat's first byte. */
async function agentsCall(url, token) {
  const started = performance.now();
  const res = await fetch(`${url}/ai_assistant/ai/agents`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) fail(`GET /ai_assistant/ai/agents answered ${res.status}`);
  await res.arrayBuffer();
  return performance.now() - started;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
};

async function sequential(n, call) {
  const samples = [];
  for (let i = 0; i < n; i += 1) samples.push(await call());
  return samples;
}

async function main() {
  const missing = missingEntryPoints(['platform'], ['api', 'migrate']);
  if (missing.length) fail(`Not built: ${missing.join(', ')} (run npm run build)`);
  const { ScriptedOpenAI } = await import(PROVIDER_MODULE);
  provider = await ScriptedOpenAI.start();
  provider.otherwise(() => ({ text: ['Hello', ' from', ' the', ' bench'], delayMs: PROVIDER_DELAY_MS }));

  const { databaseVar, database } = APPS.platform;
  databaseUrl = withDatabase(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`, `${database}_ai_bench`);
  redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  await redisPing(redisUrl).catch((err) => fail(`Redis does not answer at ${redactUrl(redisUrl)} (${err.message})`));
  await dropDatabase(databaseUrl);
  const admin = { email: 'ai-bench@example.com', password: randomBytes(18).toString('base64url') };
  const url = await startPlatform({
    ...process.env,
    LOG_LEVEL: 'warn',
    [databaseVar]: databaseUrl,
    PLATFORM_PORT: String(await freePort()),
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: admin.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
    AI_OPENAI_API_KEY: 'sk-bench',
    AI_OPENAI_BASE_URL: provider.url,
  });
  const token = await login(url, admin.email, admin.password);

  console.log(
    `ai-chat: ${RUNS} sequential runs each (after warm-up), provider first byte after ${PROVIDER_DELAY_MS} ms; ${ROUNDS} rounds of ${CONCURRENCY} concurrent chats`,
  );
  await sequential(20, providerCall);
  await sequential(20, () => chatCall(url, token));
  await sequential(20, () => agentsCall(url, token));
  const direct = await sequential(RUNS, providerCall);
  const floor = await sequential(RUNS, () => agentsCall(url, token));
  const chats = await sequential(RUNS, () => chatCall(url, token));

  await probe('reset');
  await sleep(1000);
  const idle = await probe('read');
  await probe('reset');
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const concurrentStarted = performance.now();
  const concurrent = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    concurrent.push(...(await Promise.all(Array.from({ length: CONCURRENCY }, () => chatCall(url, token)))));
  }
  const concurrentMs = performance.now() - concurrentStarted;
  const loaded = await probe('read');
  const cpu = api.profileFile
    ? summarizeProfile(await takeProfile(api.child, api.profileFile), {
        fromUs,
        toUs: Number(process.hrtime.bigint() / 1000n),
        top: Number(process.env.BENCH_CPU_TOP ?? 20),
      })
    : undefined;
  if (cpu) console.log(formatSummary('platform-api (concurrent chats)', cpu));

  const summary = {
    authenticatedGetP50Ms: percentile(floor, 50),
    providerFirstByteP50Ms: percentile(
      direct.map((s) => s.firstByteMs),
      50,
    ),
    chatFirstByteP50Ms: percentile(
      chats.map((s) => s.firstByteMs),
      50,
    ),
    chatFirstTextDeltaP50Ms: percentile(
      chats.map((s) => s.firstMarkerMs),
      50,
    ),
    chatFirstTextDeltaP95Ms: percentile(
      chats.map((s) => s.firstMarkerMs),
      95,
    ),
  };
  summary.overheadP50Ms = Math.round((summary.chatFirstTextDeltaP50Ms - summary.providerFirstByteP50Ms) * 100) / 100;
  summary.overheadGoalMs = OVERHEAD_GOAL_MS;
  summary.overheadWithinGoal = summary.overheadP50Ms < OVERHEAD_GOAL_MS;
  summary.concurrent = {
    chats: concurrent.length,
    concurrency: CONCURRENCY,
    firstTextDeltaP50Ms: percentile(
      concurrent.map((s) => s.firstMarkerMs),
      50,
    ),
    firstTextDeltaP95Ms: percentile(
      concurrent.map((s) => s.firstMarkerMs),
      95,
    ),
    chatsPerSec: Math.round((concurrent.length / (concurrentMs / 1000)) * 10) / 10,
    apiEventLoopDelay: loaded,
    apiEventLoopDelayIdle: idle,
  };
  summary.stallGoalMs = STALL_GOAL_MS;
  summary.stallWithinGoal = loaded.maxMs < STALL_GOAL_MS;

  console.log(
    `\nprovider alone: first byte p50 ${summary.providerFirstByteP50Ms} ms; authenticated GET /ai_assistant/ai/agents p50 ${summary.authenticatedGetP50Ms} ms\n` +
      `chat: first byte p50 ${summary.chatFirstByteP50Ms} ms, first text-delta p50 ${summary.chatFirstTextDeltaP50Ms} ms (p95 ${summary.chatFirstTextDeltaP95Ms} ms)\n` +
      `overhead over the provider (first text-delta - provider first byte, p50): ${summary.overheadP50Ms} ms ` +
      `(goal < ${OVERHEAD_GOAL_MS} ms: ${summary.overheadWithinGoal ? 'met' : 'MISSED'})\n` +
      `${concurrent.length} chats, ${CONCURRENCY} at a time: first text-delta p50 ${summary.concurrent.firstTextDeltaP50Ms} ms, ` +
      `p95 ${summary.concurrent.firstTextDeltaP95Ms} ms, ${summary.concurrent.chatsPerSec} chats/s\n` +
      `API event-loop delay meanwhile: max ${loaded.maxMs} ms, p99 ${loaded.p99Ms} ms (idle: max ${idle.maxMs} ms) ` +
      `(goal max < ${STALL_GOAL_MS} ms: ${summary.stallWithinGoal ? 'met' : 'MISSED'})`,
  );
  writeBenchResult(
    RESULTS_FILE,
    { summary, cpu },
    { runs: RUNS, concurrency: CONCURRENCY, rounds: ROUNDS, providerDelayMs: PROVIDER_DELAY_MS },
  );
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    await provider?.close();
    if (databaseUrl)
      await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop ${redactUrl(databaseUrl)}: ${err.message}`));
    if (redisUrl)
      await deleteRedisKeys(redisUrl, QUEUE_PREFIX).catch((err) =>
        console.error(`could not delete Redis keys ${QUEUE_PREFIX}:*: ${err.message}`),
      );
  })();
  return cleaning;
}

await runBenchScript('ai-chat', main, cleanup);
