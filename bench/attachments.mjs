#!/usr/bin/env node
/* global FormData, Blob */
// Attachments benchmark (issue #16), run after a build: `npm run bench:attachments`.
//
// A fresh database `platform_bench_attachments`, the API as dist/main.js runs it (local storage
// under a temp ATTACHMENTS_ROOT) on a free port, logged in as the bootstrap administrator. Three
// figures, each a ratio against a baseline measured in the same run:
// 1. Cached resized image vs plain file: GET /attachments/image/{id}?width=300&height=200 once the
//    variant is cached, against GET /attachments/file/{id2} where id2 is an attachment holding the
//    very same bytes (autocannon, both loads at once with half the connections each, so background
//    load hits both alike; median of the per-round ratios). Goal: >= 0.9.
// 2. First resize: GET /attachments/image of a 3000x2000 JPEG to 300 px wide, each request a size
//    never rendered before (so a real render: read the source, sharp, store the variant, respond),
//    against sharp called directly in this process on the same bytes with the same options, in pairs
//    run back to back (order alternated); median of the per-pair ratios direct time / API time. Goal: >= 0.8.
// 3. Upload of a 20 MB file (BENCH_UPLOAD_MB): the API process's peak RSS growth during the upload (VmHWM after,
//    reset through /proc/<pid>/clear_refs before; sampled VmRSS as a fallback) against its RSS before.
//    Goal: < 40 MB, i.e. the file is streamed to storage, not buffered.
// Always stops the API, drops the database and removes the storage dir. Knobs: BENCH_DURATION (s,
// default 5), BENCH_CONNECTIONS (default 16), BENCH_WARMUP (s, default 1), BENCH_ROUNDS (default 3),
// BENCH_RESIZES (render pairs, default 15), BENCH_UPLOAD_MB (default 20), PLATFORM_DATABASE_URL, REDIS_URL.
// Writes bench/results/attachments.json.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeBenchResult } from './lib/results.mjs';
import sharp from 'sharp';
import {
  APPS,
  REPO_ROOT,
  entryPoint,
  requirePrerequisites,
  runMigrate,
  startHttpApp,
  stopProcesses,
  withDatabase,
} from '../scripts/lib/apps.mjs';
import { dropDatabase } from '../scripts/lib/databases.mjs';
import { freePort, sleep } from '../scripts/lib/probes.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RESIZES = Number(process.env.BENCH_RESIZES ?? 15);
const UPLOAD_BYTES = Number(process.env.BENCH_UPLOAD_MB ?? 20) * 1024 * 1024;
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'attachments.json');
// The resizer's options (apps/platform-api/src/modules/attachments/image-resizer.ts), for the direct baseline.
const SHARP_OPTIONS = { limitInputPixels: 50_000_000, failOn: 'warning', autoOrient: true };
sharp.cache(false); // as the resizer sets it

const baseUrl = process.env.PLATFORM_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/platform';
const databaseUrl = withDatabase(baseUrl, 'platform_bench_attachments');
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const admin = { email: 'bench-admin@example.com', password: randomBytes(18).toString('base64url') };
const storageRoot = mkdtempSync(path.join(os.tmpdir(), 'bench-attachments-'));
const children = [];
let api;

const median = (list) => {
  const sorted = [...list].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round2 = (n) => Math.round(n * 100) / 100;

async function startApi(env) {
  await runMigrate('platform', env, { track: children });
  const url = `http://127.0.0.1:${env.PLATFORM_PORT}`;
  api = await startHttpApp({ label: 'platform-api', script: entryPoint('platform', 'api'), env, url, track: children });
  return url;
}

async function login(url) {
  const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams(admin) });
  if (!res.ok) fail(`login: ${res.status} ${await res.text()}`);
  return (await res.json()).token;
}

async function upload(url, token, data, name) {
  const form = new FormData();
  form.set('entityId', 'bench:item');
  form.set('recordId', 'bench');
  form.set('file', new Blob([data]), name);
  const res = await fetch(`${url}/attachments`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  if (!res.ok) fail(`upload ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()).item;
}

async function fetchBytes(url, token) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) fail(`GET ${url}: ${res.status} ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

async function cannon(url, token, connections = CONNECTIONS) {
  const warmup = WARMUP > 0 ? { warmup: { connections, duration: WARMUP } } : {};
  const r = await autocannon({ url, connections, duration: DURATION, headers: { authorization: `Bearer ${token}` }, ...warmup });
  return { reqPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

/**
 * 1. The cached variant against the file route serving the same bytes. Both loads run at the same
 * time, half the connections each, so the background load of a shared machine hits both alike; the
 * ratio is taken per round, and its median reported.
 */
async function cachedImageVsFile(url, token, source) {
  const imagePath = `/attachments/image/${source.id}/photo.jpg?width=300&height=200&cropType=cover`;
  const variant = await fetchBytes(`${url}${imagePath}`, token);
  const twin = await upload(url, token, variant, 'variant.jpg');
  const again = await fetchBytes(`${url}${twin.url}`, token);
  if (Buffer.compare(again, variant) !== 0) fail('the twin attachment does not hold the variant’s bytes');
  const connections = Math.max(1, Math.floor(CONNECTIONS / 2));
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [image, file] = await Promise.all([
      cannon(`${url}${imagePath}`, token, connections),
      cannon(`${url}${twin.url}`, token, connections),
    ]);
    for (const [side, r] of [
      ['image', image],
      ['file', file],
    ]) {
      if (r.non2xx || r.errors) fail(`${side} round: ${r.non2xx} non-2xx, ${r.errors} errors`);
    }
    runs.push({
      image,
      file,
      ratio: round2(image.reqPerSec / file.reqPerSec),
      apiRssMb: round2(procStatus(api.child.pid, 'VmRSS') / 2 ** 20),
    });
  }
  return {
    bytes: variant.length,
    image: median(runs.map((r) => r.image.reqPerSec)),
    file: median(runs.map((r) => r.file.reqPerSec)),
    ratio: median(runs.map((r) => r.ratio)),
    runs,
  };
}

/**
 * 2. First renders over HTTP against sharp in this process, on the same 3000x2000 JPEG. Each pair
 * (one API render, one direct call, order alternated) runs back to back, so both see the same
 * background load; the figure is the median of the per-pair ratios direct / API.
 */
async function firstResizeVsSharp(url, token, source, jpeg) {
  const pairs = [];
  const timeDirect = async (height) => {
    const started = performance.now();
    await sharp(jpeg, SHARP_OPTIONS).resize({ width: 300, height, fit: 'cover' }).toFormat('jpeg').toBuffer();
    return performance.now() - started;
  };
  const timeApi = async (height) => {
    const started = performance.now();
    await fetchBytes(`${url}/attachments/image/${source.id}?width=300&height=${height}&cropType=cover`, token);
    return performance.now() - started;
  };
  await timeDirect(149); // warm both paths once (sharp's first call loads libvips operations)
  await timeApi(149);
  for (let i = 0; i < RESIZES; i++) {
    const height = 150 + i; // a size not rendered before: every API request is a cache miss
    let apiMs;
    let directMs;
    if (i % 2) {
      apiMs = await timeApi(height);
      directMs = await timeDirect(height);
    } else {
      directMs = await timeDirect(height);
      apiMs = await timeApi(height);
    }
    pairs.push({ apiMs: round2(apiMs), directMs: round2(directMs), ratio: round2(directMs / apiMs) });
  }
  const fastest = (key) => Math.min(...pairs.map((p) => p[key]));
  return {
    apiMs: round2(median(pairs.map((p) => p.apiMs))),
    directMs: round2(median(pairs.map((p) => p.directMs))),
    ratio: median(pairs.map((p) => p.ratio)),
    // The fastest of each side: the least disturbed by background load, a second view of the same figure.
    fastestRatio: round2(fastest('directMs') / fastest('apiMs')),
    pairs,
  };
}

function procStatus(pid, field) {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) * 1024 : null;
}

/** 3. Peak RSS growth of the API while it receives an upload of UPLOAD_BYTES. */
async function uploadRss(url, token) {
  const pid = api.child.pid;
  const data = randomBytes(UPLOAD_BYTES);
  await upload(url, token, randomBytes(64 * 1024), 'warm.bin'); // first multipart request: lazy initialisation
  const samples = [];
  for (let i = 0; i < ROUNDS; i++) {
    await sleep(300);
    const before = procStatus(pid, 'VmRSS');
    let resetPeak = true;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    } catch {
      resetPeak = false;
    }
    let sampledPeak = before;
    const timer = setInterval(() => (sampledPeak = Math.max(sampledPeak, procStatus(pid, 'VmRSS') ?? 0)), 5);
    const started = performance.now();
    const item = await upload(url, token, data, `big-${i}.bin`);
    const ms = performance.now() - started;
    clearInterval(timer);
    if (item.fileSize !== UPLOAD_BYTES) fail(`uploaded ${item.fileSize} bytes, expected ${UPLOAD_BYTES}`);
    const peak = resetPeak ? Math.max(procStatus(pid, 'VmHWM'), sampledPeak) : sampledPeak;
    samples.push({
      rssBeforeMb: round2(before / 2 ** 20),
      peakMb: round2(peak / 2 ** 20),
      growthMb: round2((peak - before) / 2 ** 20),
      ms: Math.round(ms),
      peakFrom: resetPeak ? 'VmHWM' : 'sampled VmRSS',
    });
  }
  return { bytes: UPLOAD_BYTES, maxGrowthMb: Math.max(...samples.map((s) => s.growthMb)), samples };
}

async function main() {
  await requirePrerequisites({ apps: ['platform'], kinds: ['api', 'migrate'], databaseUrl: baseUrl, redisUrl });
  await dropDatabase(databaseUrl);

  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    [APPS.platform.portVar]: String(await freePort()),
    PLATFORM_DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `bench-attachments-${randomBytes(4).toString('hex')}`,
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: admin.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
    ATTACHMENTS_DRIVER: 'local',
    ATTACHMENTS_ROOT: storageRoot,
  };
  const url = await startApi(env);
  const token = await login(url);

  // A photo-like 3000x2000 JPEG: smooth gradients plus noise, so it compresses like a real one.
  const raw = Buffer.alloc(3000 * 2000 * 3);
  for (let i = 0; i < raw.length; i += 3) {
    const x = (i / 3) % 3000;
    const y = Math.floor(i / 3 / 3000);
    raw[i] = (x * 200) / 3000 + Math.random() * 48;
    raw[i + 1] = (y * 200) / 2000 + Math.random() * 48;
    raw[i + 2] = 96 + Math.random() * 48;
  }
  const jpeg = await sharp(raw, { raw: { width: 3000, height: 2000, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  const source = await upload(url, token, jpeg, 'photo.jpg');
  console.log(
    `bench: source 3000x2000 JPEG, ${(jpeg.length / 2 ** 20).toFixed(2)} MB; ${CONNECTIONS} connections, ${DURATION} s x ${ROUNDS} rounds`,
  );

  const rssAt = {};
  const noteRss = (phase) => (rssAt[phase] = round2(procStatus(api.child.pid, 'VmRSS') / 2 ** 20));
  noteRss('started');
  const cached = await cachedImageVsFile(url, token, source);
  noteRss('afterCachedReads');
  console.log(`bench: cached variant ${cached.image} req/s vs file ${cached.file} req/s (same ${cached.bytes} bytes): ${cached.ratio}`);
  const resize = await firstResizeVsSharp(url, token, source, jpeg);
  console.log(
    `bench: first resize via API ${resize.apiMs} ms vs sharp direct ${resize.directMs} ms: ${resize.ratio} (fastest of each: ${resize.fastestRatio})`,
  );
  noteRss('afterFirstRenders');
  const rss = await uploadRss(url, token);
  noteRss('afterUploads');
  console.log(`bench: API RSS (MB) ${JSON.stringify(rssAt)}`);
  console.log(
    `bench: ${UPLOAD_BYTES / 2 ** 20} MB upload, API peak RSS growth ${rss.maxGrowthMb} MB (${rss.samples.map((s) => s.growthMb).join(' / ')})`,
  );

  const verdict = (ok) => (ok ? 'met' : 'NOT met');
  console.log(`\n| measure | figure | baseline | ratio | goal |`);
  console.log(`| --- | ---: | ---: | ---: | --- |`);
  console.log(
    `| cached resized image, req/s | ${cached.image} | file route ${cached.file} | ${cached.ratio} | >= 0.9: ${verdict(cached.ratio >= 0.9)} |`,
  );
  console.log(
    `| first resize 3000x2000 -> 300 px, ms | ${resize.apiMs} | sharp direct ${resize.directMs} | ${resize.ratio} | >= 0.8: ${verdict(resize.ratio >= 0.8)} |`,
  );
  console.log(
    `| ${UPLOAD_BYTES / 2 ** 20} MB upload, peak RSS growth MB | ${rss.maxGrowthMb} | | | < 40: ${verdict(rss.maxGrowthMb < 40)} |`,
  );

  writeBenchResult(
    RESULTS_FILE,
    { cachedImageVsFile: cached, firstResizeVsSharp: resize, uploadPeakRss: rss, apiRssMb: rssAt },
    { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP, rounds: ROUNDS, resizes: RESIZES },
  );
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

let cleaning;
const cleanup = () =>
  (cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop platform_bench_attachments: ${err.message}`));
    rmSync(storageRoot, { recursive: true, force: true });
  })());
await runBenchScript('bench', main, cleanup);
