#!/usr/bin/env node
// Issue #34: what the app's ValidationPipe costs per request on the two hot inputs the same-work pairs
// send (`GET /contacts?limit=20`'s query, `POST /auth/feature-check`'s body), in process, so that a
// machine shared with other work cannot drown a few microseconds: Nest's plain ValidationPipe with the
// apps' options against the apps' pipe (`createValidationPipe`, which remembers successful results per
// DTO class and input: service-kit MemoizingValidationPipe). Rounds alternate the two; medians reported.
// After `npm run build`: `node bench/validation-pipe.mjs` (BENCH_ROUNDS, BENCH_CALLS).
// Writes bench/results/validation-pipe.json (BENCH_RESULTS_FILE: another path).
import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { createValidationPipe } from '@app/service-kit';
import { FeatureCheckDto } from '../apps/platform-api/dist/modules/auth/auth.dto.js';
import { ListContactsQuery } from '../apps/mail-api/dist/modules/contacts/contacts.dto.js';
import { writeBenchResult } from './lib/results.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const RESULTS_FILE = process.env.BENCH_RESULTS_FILE ?? 'bench/results/validation-pipe.json';

const inputs = [
  {
    name: 'GET /contacts?limit=20 (query)',
    metadata: { type: 'query', metatype: ListContactsQuery },
    // Express 5 parses a query string into an object with a null prototype.
    value: () => Object.assign(Object.create(null), { limit: '20' }),
  },
  {
    name: 'POST /auth/feature-check (body)',
    metadata: { type: 'body', metatype: FeatureCheckDto },
    value: () => ({ features: ['auth.roles.list', 'directory.tenants.view'] }),
  },
];

// What createValidationPipe configured before the memo: the same options, Nest's own class.
const plainPipe = () => new ValidationPipe({ whitelist: true, transform: true, transformOptions: { enableImplicitConversion: false } });

/** Microseconds per call (CPU of this process, which does nothing else). */
async function timePerCall(pipe, input) {
  const values = Array.from({ length: CALLS }, input.value);
  const started = process.cpuUsage();
  for (const value of values) await pipe.transform(value, input.metadata);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / CALLS;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (const input of inputs) {
  const pipes = { plain: plainPipe(), app: createValidationPipe(400) };
  // Warm-up: JIT and the first (remembered) validation.
  for (const pipe of Object.values(pipes)) await timePerCall(pipe, input);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['plain', 'app'] : ['app', 'plain'];
    const us = {};
    for (const which of order) us[which] = Math.round((await timePerCall(pipes[which], input)) * 100) / 100;
    rounds.push(us);
  }
  const result = {
    input: input.name,
    plainUsPerCall: median(rounds.map((r) => r.plain)),
    appUsPerCall: median(rounds.map((r) => r.app)),
    rounds,
  };
  results.push(result);
  console.log(
    `validation pipe: ${input.name}: Nest ValidationPipe ${result.plainUsPerCall} us, app pipe ${result.appUsPerCall} us per call ` +
      `(CPU, medians of ${ROUNDS} alternating rounds of ${CALLS} calls)`,
  );
}
writeBenchResult(RESULTS_FILE, { results }, { rounds: ROUNDS, calls: CALLS });
console.log(`written: ${RESULTS_FILE}`);
