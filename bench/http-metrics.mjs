#!/usr/bin/env node
// `node bench/http-metrics.mjs` (after `npm run build -w @app/service-kit`): what the HTTP metrics
// middleware costs per request, two ways, each against a baseline measured in the same run:
//   1. micro: `HttpMetrics.track` + the response's close (label from the route, one observe) against
//      the same listener doing nothing, in a loop of fake requests;
//   2. macro: a plain Express 5 app answering GET /healthz, without and with the middleware, each in
//      its own process, loaded in turns with autocannon (50 connections); the ratio is with / without.
// Knobs: BENCH_SECONDS (per run, default 5), BENCH_ROUNDS (default 3). Writes bench/results/http-metrics.json.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { HttpMetrics, MetricsRegistry } from '@app/service-kit';
import { writeBenchResult } from './lib/results.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RESULTS_FILE = fileURLToPath(new URL('./results/http-metrics.json', import.meta.url));

function micro() {
  const metrics = new HttpMetrics(new MetricsRegistry({ service: 'bench' }));
  const routes = ['/contacts/:id', '/v1/send', '/healthz', '/auth/roles'];
  const fake = (i) => {
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true });
    const req = { method: 'GET', route: { path: routes[i % routes.length] }, baseUrl: '' };
    return { req, res };
  };
  const loop = (n, withMetrics) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const { req, res } = fake(i);
      if (withMetrics) metrics.track(req, res);
      else res.once('close', () => undefined);
      res.emit('close');
    }
    return Number(process.hrtime.bigint() - started) / n;
  };
  loop(50_000, true); // warm up both paths
  loop(50_000, false);
  const results = [];
  for (let round = 0; round < 5; round++) results.push({ base: loop(200_000, false), metrics: loop(200_000, true) });
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { baselineNs: median(results.map((r) => r.base)), withMetricsNs: median(results.map((r) => r.metrics)) };
}

function startServer(script) {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const match = /listening (\d+)/.exec(String(chunk));
      if (match) resolve({ child, url: `http://127.0.0.1:${match[1]}/healthz` });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function load(url) {
  const result = await autocannon({ url, connections: 50, duration: SECONDS });
  return result.requests.average;
}

async function macro() {
  const plain = await startServer('./lib/plain-express-server.mjs');
  const measured = await startServer('./lib/express-metrics-server.mjs');
  try {
    await load(plain.url); // warm up
    await load(measured.url);
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so a drift of the machine's load does not favour one side.
      if (round % 2 === 0) rounds.push({ plain: await load(plain.url), metrics: await load(measured.url) });
      else rounds.push({ metrics: await load(measured.url), plain: await load(plain.url) });
    }
    const sum = (key) => rounds.reduce((total, r) => total + r[key], 0);
    return { rounds, ratio: sum('metrics') / sum('plain') };
  } finally {
    plain.child.kill('SIGTERM');
    measured.child.kill('SIGTERM');
  }
}

const m = micro();
console.log(
  `micro: close listener alone ${m.baselineNs.toFixed(0)} ns, with HttpMetrics.track ${m.withMetricsNs.toFixed(0)} ns: ` +
    `+${(m.withMetricsNs - m.baselineNs).toFixed(0)} ns per request`,
);
const { rounds, ratio } = await macro();
for (const [i, r] of rounds.entries())
  console.log(`round ${i + 1}: plain Express ${r.plain.toFixed(0)} req/s, with metrics ${r.metrics.toFixed(0)} req/s`);
console.log(`macro: GET /healthz with the metrics middleware / plain Express 5 = ${ratio.toFixed(3)}`);
writeBenchResult(
  RESULTS_FILE,
  { micro: m, macro: { rounds, ratio } },
  { secondsPerRun: SECONDS, rounds: ROUNDS, connections: 50, route: 'GET /healthz' },
);
console.log(`written: ${RESULTS_FILE}`);
