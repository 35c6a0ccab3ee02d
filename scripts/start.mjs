#!/usr/bin/env node
// `npm start`: zero-config local run (decisions.md "Operator contract"). Builds, makes sure Postgres
// and Redis are there (starting an embedded Postgres / a redis-server under .data/ when nothing
// answers), applies both services' migrations, then runs platform-api, platform worker, mail-api and
// mail worker with prefixed output until Ctrl+C or SIGTERM. A service that crashes is restarted with
// backoff (1 s, 2 s, 5 s, 10 s, then every 30 s while it keeps crashing); the others keep running.
//
// The apps' own variables (PLATFORM_PORT, MAIL_PORT, *_DATABASE_URL, REDIS_URL, *_BOOTSTRAP_*, ...)
// pass through. Knobs of this script:
//   START_APPS=platform,mail  services to run (default both), e.g. START_APPS=platform
//   START_PG_PORT=5432        where Postgres is expected on 127.0.0.1 when no *_DATABASE_URL is set:
//                             probed there, embedded Postgres started there if nothing listens, and
//                             used in the default database URLs
//   START_REDIS_PORT=6379     the same for Redis when REDIS_URL is unset
//   START_SKIP_BUILD=1        use dist/ as it is (no `turbo run build`)
// The mail worker's inbound SMTP listener for bounce and complaint reports is on by default here:
// MAIL_BOUNCE_DOMAIN defaults to bounces.localhost and MAIL_INBOUND_SMTP_PORT to 2526 (checked free).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  APPS,
  REPO_ROOT,
  describeExit,
  entryPoint,
  labelled,
  missingEntryPoints,
  parseAppList,
  spawnNode,
  stopProcesses,
} from './lib/apps.mjs';
import { loadOrCreateDevCredentials } from './lib/dev-credentials.mjs';
import { startEmbeddedPostgres, startRedisServer } from './lib/local-infra.mjs';
import { httpOk, isLoopback, onPath, redactUrl, redisAnswers, tcpAccepts, waitUntil } from './lib/probes.mjs';

const DATA_DIR = path.join(REPO_ROOT, '.data');
const CREDENTIALS_FILE = path.join(DATA_DIR, 'dev-credentials.json');
const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

/** A problem the developer can fix, reported as one line. */
class Fatal extends Error {}

const say = labelled('start');
const env = { ...process.env };
const infra = []; // stop() of the Postgres / Redis we started, stopped after the apps
const children = []; // migrations and services
let stopping = false;

function portKnob(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Fatal(`${name} must be a TCP port (got "${process.env[name]}")`);
  return value;
}

function build(apps) {
  if (process.env.START_SKIP_BUILD === '1') return;
  const filters = apps.length < Object.keys(APPS).length ? apps.map((app) => `--filter=${path.basename(APPS[app].dir)}`) : [];
  const args = ['turbo', 'run', 'build', ...filters];
  const result = spawnSync('npx', args, { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.status !== 0)
    throw new Fatal(
      `Build failed (npx ${args.join(' ')} ${describeExit({ code: result.status, signal: result.signal, error: result.error })}); see the errors above.`,
    );
}

async function ensurePostgres(apps, pgPort) {
  const variables = Object.values(APPS).map((app) => app.databaseVar);
  if (variables.some((name) => process.env[name])) {
    for (const { databaseVar, database } of apps.map((app) => APPS[app])) {
      const url = new URL(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`);
      if (!(await tcpAccepts(url.hostname, Number(url.port || 5432)))) {
        throw new Fatal(`Postgres is not reachable at ${redactUrl(url)} (${databaseVar}): start it or fix ${databaseVar}.`);
      }
    }
    return;
  }
  for (const { databaseVar, database } of Object.values(APPS)) env[databaseVar] = `postgres://postgres@127.0.0.1:${pgPort}/${database}`;
  if (await tcpAccepts('127.0.0.1', pgPort)) return;
  say(`nothing listens on 127.0.0.1:${pgPort}: starting an embedded Postgres in .data/postgres`);
  try {
    const postgres = await startEmbeddedPostgres({ port: pgPort, dataDir: DATA_DIR, log: labelled('postgres') });
    infra.push(postgres.stop);
  } catch (err) {
    throw new Fatal(
      `Postgres is not reachable at 127.0.0.1:${pgPort} and the embedded Postgres could not start: ${err.message}. Install PostgreSQL or set ${variables.join(' and ')}.`,
    );
  }
}

async function ensureRedis(redisPort) {
  const url = process.env.REDIS_URL ?? `redis://127.0.0.1:${redisPort}`;
  env.REDIS_URL = url;
  if (await redisAnswers(url)) return;
  const { hostname, port } = new URL(url);
  const shown = redactUrl(url);
  if (!isLoopback(hostname)) throw new Fatal(`Redis is not reachable at ${shown}: start it or fix REDIS_URL.`);
  if (!onPath('redis-server')) {
    throw new Fatal(
      `Redis is not reachable at ${shown} and no redis-server is on PATH: install Redis (apt-get install redis-server) or set REDIS_URL.`,
    );
  }
  if (await tcpAccepts(hostname, Number(port || 6379))) {
    throw new Fatal(`Something listens at ${shown} but does not answer a Redis PING (wrong password?): stop it or fix REDIS_URL.`);
  }
  say(`no Redis at ${shown}: starting redis-server with its files in .data/redis`);
  try {
    const redis = await startRedisServer({ port: Number(port || 6379), dataDir: DATA_DIR, log: labelled('redis') });
    infra.push(redis.stop);
  } catch (err) {
    throw new Fatal(`Redis is not reachable at ${shown} and redis-server could not start: ${err.message}. Install Redis or set REDIS_URL.`);
  }
}

/** Ports from PLATFORM_PORT / MAIL_PORT (or the defaults), checked free so a clash is one clear line. */
async function claimPorts(apps) {
  const ports = {};
  for (const app of apps) {
    const { portVar, defaultPort } = APPS[app];
    ports[app] = portKnob(portVar, defaultPort);
    if (await tcpAccepts('127.0.0.1', ports[app])) {
      throw new Fatal(`Port ${ports[app]} is already in use on 127.0.0.1 (is ${app} already running?): stop it or set ${portVar}.`);
    }
    env[portVar] = String(ports[app]);
  }
  return ports;
}

/**
 * The mail worker's bounce and complaint listener (decisions.md "Deliverability"): on with
 * MAIL_BOUNCE_DOMAIN=bounces.localhost unless set, on MAIL_INBOUND_SMTP_PORT (default 2526), checked
 * free like the HTTP ports. Returns the banner line, or null when mail does not run.
 */
async function applyBounceListener(apps) {
  if (!apps.includes('mail')) return null;
  env.MAIL_BOUNCE_DOMAIN ??= 'bounces.localhost';
  const port = portKnob('MAIL_INBOUND_SMTP_PORT', 2526);
  if (await tcpAccepts('127.0.0.1', port)) {
    throw new Fatal(`Port ${port} is already in use on 127.0.0.1 (the mail bounce listener's): stop it or set MAIL_INBOUND_SMTP_PORT.`);
  }
  env.MAIL_INBOUND_SMTP_PORT = String(port);
  return `${'mail bounces'.padEnd(13)} ${`smtp://localhost:${port}`.padEnd(23)} reports to bounces+<token>@${env.MAIL_BOUNCE_DOMAIN}`;
}

/** Bootstrap credentials from .data/dev-credentials.json unless set by the developer; returns lines to show. */
function applyDevCredentials(apps, ports) {
  const runs = (app) => apps.includes(app);
  const usePlatform = runs('platform') && !process.env.PLATFORM_BOOTSTRAP_ADMIN_EMAIL && !process.env.PLATFORM_BOOTSTRAP_ADMIN_PASSWORD;
  const useMail = runs('mail') && !process.env.MAIL_BOOTSTRAP_SECRET_KEY && !process.env.MAIL_BOOTSTRAP_PUBLIC_KEY;
  const lines = [];
  if (usePlatform || useMail) {
    const { credentials, created } = loadOrCreateDevCredentials(CREDENTIALS_FILE);
    const { platformAdmin, mail } = credentials;
    if (usePlatform)
      Object.assign(env, {
        PLATFORM_BOOTSTRAP_ADMIN_EMAIL: platformAdmin.email,
        PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: platformAdmin.password,
      });
    if (useMail) Object.assign(env, { MAIL_BOOTSTRAP_SECRET_KEY: mail.secretKey, MAIL_BOOTSTRAP_PUBLIC_KEY: mail.publicKey });
    if (created) {
      lines.push('Dev credentials (shown once; kept in .data/dev-credentials.json):');
      if (usePlatform) lines.push(`  platform admin   ${platformAdmin.email} / ${platformAdmin.password}`);
      if (useMail) lines.push(`  mail secret key  ${mail.secretKey}`, `  mail public key  ${mail.publicKey}`);
    } else {
      lines.push('Dev credentials: .data/dev-credentials.json');
    }
  }
  if (runs('platform') && runs('mail')) {
    // platform -> mail works with zero config: the platform calls the local mail-api with its key.
    if (!env.PLATFORM_MAIL_API_KEY && env.MAIL_BOOTSTRAP_SECRET_KEY) env.PLATFORM_MAIL_API_KEY = env.MAIL_BOOTSTRAP_SECRET_KEY;
    env.PLATFORM_MAIL_API_URL ??= `http://127.0.0.1:${ports.mail}`;
  }
  return lines;
}

async function migrate(app) {
  const migration = spawnNode(`${app}-migrate`, entryPoint(app, 'migrate'), env);
  children.push(migration);
  const result = await migration.exited;
  if (result.code !== 0 && !stopping)
    throw new Fatal(`${app} migrations failed: ${entryPoint(app, 'migrate')} ${describeExit(result)} (output above).`);
}

const RESTART_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/** A service that stayed up this long is healthy again: its next crash restarts it after the first delay. */
const STABLE_AFTER_MS = 60_000;

/**
 * Runs one service and, like a process supervisor, restarts it when it dies on its own (with growing
 * delays while it keeps crashing), so one crashed worker does not take the other services down.
 */
function startService(app, kind, attempt = 0) {
  const service = spawnNode(`${app}-${kind}`, entryPoint(app, kind), env);
  const startedAt = Date.now();
  children.push(service);
  if (service.child.pid) say(`${service.label} started (pid ${service.child.pid})`);
  service.exited.then((result) => {
    children.splice(children.indexOf(service), 1);
    if (stopping) return;
    const next = Date.now() - startedAt >= STABLE_AFTER_MS ? 0 : attempt;
    const delay = RESTART_BACKOFF_MS[Math.min(next, RESTART_BACKOFF_MS.length - 1)];
    say(`${service.label} ${describeExit(result)} unexpectedly: restarting it in ${delay / 1000} s`);
    setTimeout(() => {
      if (!stopping) startService(app, kind, next + 1);
    }, delay);
  });
}

async function waitHealthy(apps, ports) {
  const urls = apps.map((app) => `http://127.0.0.1:${ports[app]}/healthz`);
  const healthy = await waitUntil(async () => (await Promise.all(urls.map((url) => httpOk(url)))).every(Boolean), HEALTH_TIMEOUT_MS, 250);
  if (!healthy && !stopping) {
    const failing = [];
    for (const url of urls) if (!(await httpOk(url))) failing.push(url);
    throw new Fatal(`No answer from ${failing.join(' and ')} within ${HEALTH_TIMEOUT_MS / 1000} s (see the logs above).`);
  }
}

function banner(apps, ports, credentialLines, bounceLine) {
  const lines = apps.map((app) => {
    const url = `http://localhost:${ports[app]}`;
    return `${path.basename(APPS[app].dir).padEnd(13)} ${url.padEnd(23)} docs: ${url}/docs`;
  });
  if (bounceLine) lines.push(bounceLine);
  const all = ['', ...lines, ...credentialLines, 'Press Ctrl+C to stop.', ''];
  const width = Math.max(...all.map((line) => line.length));
  say('='.repeat(width));
  for (const line of all) say(line);
  say('='.repeat(width));
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  const killed = await stopProcesses(children, STOP_GRACE_MS);
  if (killed.length) say(`killed after ${STOP_GRACE_MS / 1000} s: ${killed.join(', ')}`);
  for (const stop of infra.reverse()) await stop().catch((err) => say(`could not stop a local database cleanly: ${err.message}`));
  process.exit(code);
}

let signalledAt = 0;
function onSignal(signal) {
  // Under `npm start` one Ctrl+C arrives twice (from the terminal and forwarded by npm).
  if (Date.now() - signalledAt < 1000) return;
  signalledAt = Date.now();
  if (stopping) {
    say(`${signal} again: killing the services now`);
    for (const { child } of children) child.kill('SIGKILL');
    return;
  }
  say(`${signal}: stopping (Ctrl+C again to kill)`);
  void shutdown(0);
}

async function main() {
  let apps;
  try {
    apps = parseAppList(process.env.START_APPS, 'START_APPS');
  } catch (err) {
    throw new Fatal(err.message);
  }
  const pgPort = portKnob('START_PG_PORT', 5432);
  const redisPort = portKnob('START_REDIS_PORT', 6379);
  build(apps);
  const missing = missingEntryPoints(apps, ['api', 'worker', 'migrate']);
  if (missing.length) {
    const hint = apps.length > 1 ? ' (START_APPS=platform or START_APPS=mail runs one service)' : '';
    throw new Fatal(`Not built: ${missing.join(', ')}. The build did not produce these entry points${hint}.`);
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);
  await ensurePostgres(apps, pgPort);
  await ensureRedis(redisPort);
  const ports = await claimPorts(apps);
  const bounceLine = await applyBounceListener(apps);
  const credentialLines = applyDevCredentials(apps, ports);
  for (const app of apps) await migrate(app);
  if (stopping) return;
  for (const app of apps) for (const kind of ['api', 'worker']) startService(app, kind);
  await waitHealthy(apps, ports);
  if (!stopping) banner(apps, ports, credentialLines, bounceLine);
}

main().catch((err) => {
  if (stopping) return;
  console.error(err instanceof Fatal ? err.message : err);
  void shutdown(1);
});
