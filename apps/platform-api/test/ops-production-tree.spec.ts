import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { MaintenanceJob } from '@app/contracts';
import {
  createTestDatabase,
  freePort,
  parsePrometheusText,
  startNodeProcess,
  uniqueQueuePrefix,
  waitFor,
  type NodeProcess,
  type TestDatabase,
} from '@app/service-kit/testing';

const run = promisify(execFile);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const NPM_CI = ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'];

type AppName = 'platform-api' | 'mail-api';

/**
 * The production tree the Dockerfile builds (docker/Dockerfile: `turbo prune <app> --docker`, then
 * `npm ci --omit=dev` of the pruned workspace, docker/slim-node-modules.mjs, then each workspace's
 * compiled `dist/` beside it),
 * made in a temp dir for both apps. From it, in production mode, against the local Postgres and Redis:
 * the migrate entry, the API (probes, docs, queue dashboard) and the worker (probes, a job, metrics).
 */
describe('the production tree of each image', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'prod-tree-'));
  const processes: NodeProcess[] = [];
  const databases: TestDatabase[] = [];
  const queuePrefix = uniqueQueuePrefix('prodtree');
  let redis: Redis;

  const trees = {} as Record<AppName, string>;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    // Both trees at once: npm ci mostly waits on the disk and the registry cache.
    const [mail, platform] = await Promise.all([productionTree('mail-api'), productionTree('platform-api')]);
    Object.assign(trees, { 'mail-api': mail, 'platform-api': platform });
  }, 240_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await Promise.all(databases.map((db) => db.drop()));
    const keys = await redis.keys(`${queuePrefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    rmSync(root, { recursive: true, force: true });
  });

  /** What the Dockerfile's prune and deps stages make, with the compiled dist/ of the build stage. */
  async function productionTree(app: AppName): Promise<string> {
    const out = path.join(root, app);
    await run(path.join(REPO, 'node_modules/.bin/turbo'), ['prune', app, '--docker', `--out-dir=${out}`], { cwd: REPO });
    const tree = path.join(out, 'json');
    await run('npm', NPM_CI, { cwd: tree, env: { ...process.env, npm_config_loglevel: 'error' }, maxBuffer: 16 * 1024 * 1024 });
    // The deps stage's slimming (no TypeScript, no dependency source maps, declarations or markdown).
    await run(process.execPath, [path.join(REPO, 'docker/slim-node-modules.mjs'), tree]);
    const workspaces = ['apps', 'packages'].flatMap((dir) => readdirSync(path.join(tree, dir)).map((name) => path.join(dir, name)));
    for (const workspace of workspaces) cpSync(path.join(REPO, workspace, 'dist'), path.join(tree, workspace, 'dist'), { recursive: true });
    return tree;
  }

  function env(extra: Record<string, string>): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, NODE_ENV: 'production', LOG_LEVEL: 'info', REDIS_URL, QUEUE_PREFIX: queuePrefix, ...extra };
  }

  function start(name: string, tree: string, entry: string, environment: NodeJS.ProcessEnv, readyWhen: string): NodeProcess {
    const started = startNodeProcess(name, {
      entry: path.join(tree, entry),
      cwd: tree,
      env: environment,
      readyWhen,
      buildHint: 'npm run build',
    });
    processes.push(started);
    return started;
  }

  async function migrate(tree: string, app: AppName, environment: NodeJS.ProcessEnv): Promise<string[]> {
    const { stdout } = await run(process.execPath, [`apps/${app}/dist/cli/migrate.js`], { cwd: tree, env: environment });
    return (JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { applied: string[] }).applied;
  }

  /** A heartbeat job on the app's maintenance queue, answered by its worker (a real job round trip). */
  async function heartbeat(queueName: string): Promise<{ pid: number }> {
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue(queueName, { connection, prefix: queuePrefix });
    try {
      const probeId = randomUUID();
      await queue.add(MaintenanceJob.WorkerHeartbeat, { probeId, requestedAt: new Date().toISOString() });
      const answer = await waitFor(() => redis.get(`${queuePrefix}:heartbeat:${probeId}`), 20_000, `a heartbeat on ${queueName}`);
      return JSON.parse(answer) as { pid: number };
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }

  async function expectReady(base: string): Promise<void> {
    const res = await fetch(`${base}/readyz`);
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok', redis: 'ok' } },
    });
  }

  async function completedJobs(metricsBase: string, queue: string, name: string): Promise<number> {
    const samples = parsePrometheusText(await (await fetch(`${metricsBase}/metrics`)).text());
    const found = samples.find(
      (s) =>
        s.name === 'bullmq_job_duration_seconds_count' &&
        s.labels.queue === queue &&
        s.labels.name === name &&
        s.labels.outcome === 'completed',
    );
    return found?.value ?? 0;
  }

  function expectProductionDependenciesOnly(tree: string): void {
    for (const dev of [
      'jest',
      'ts-jest',
      'typescript-eslint',
      'eslint',
      'turbo',
      'playwright-core',
      'supertest',
      'node',
      'kubernetes-models',
      // An optional peer of @nestjs/swagger and valibot that nothing at runtime imports: slimmed away.
      'typescript',
    ]) {
      expect({ dev, installed: existsSync(path.join(tree, 'node_modules', dev)) }).toEqual({ dev, installed: false });
    }
    // The dependencies' maps, declarations and markdown are gone (the workspaces' own dist/, linked
    // in as node_modules/@app/* and mail-api, keeps its maps).
    const workspaceLinks = /^(@app\/|platform-api\/|mail-api\/)/;
    const slimmed = readdirSync(path.join(tree, 'node_modules'), { recursive: true, encoding: 'utf8' }).filter(
      (file) => !workspaceLinks.test(file) && /\.(map|d\.ts|md)$/.test(file),
    );
    expect(slimmed).toEqual([]);
    // Workspace packages are links to their folders in the tree, as npm ci makes them in the image.
    expect(lstatSync(path.join(tree, 'node_modules/@app/service-kit')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8')).engines).toEqual({ node: '>=24.11 <25' });
  }

  it('mail-api: migrate, API and worker run from the pruned production install', async () => {
    const tree = trees['mail-api'];
    expectProductionDependenciesOnly(tree);
    expect(existsSync(path.join(tree, 'apps/platform-api'))).toBe(false);
    const db = await createTestDatabase('prodtree_mail');
    databases.push(db);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const adminToken = randomBytes(24).toString('hex');
    const environment = env({
      MAIL_DATABASE_URL: db.url,
      MAIL_PORT: String(port),
      MAIL_WORKER_METRICS_PORT: String(metricsPort),
      DATA_DIR: path.join(root, 'mail-data'),
      MAIL_LINK_SECRET: randomBytes(32).toString('hex'),
      MAIL_SECRETS_KEY: randomBytes(32).toString('hex'),
      MAIL_ADMIN_TOKEN: adminToken,
      MAIL_BOOTSTRAP_SECRET_KEY: `sk_${randomBytes(24).toString('hex')}`,
      MAIL_BOOTSTRAP_PUBLIC_KEY: `pk_${randomBytes(24).toString('hex')}`,
    });
    expect(await migrate(tree, 'mail-api', environment)).toContain('MailDelivery1763850000000');
    const api = start('mail-api', tree, 'apps/mail-api/dist/main.js', environment, 'mail-api listening on');
    const worker = start('mail-worker', tree, 'apps/mail-api/dist/worker.js', environment, 'mail worker consuming');
    await Promise.all([api.ready, worker.ready]);

    const base = `http://127.0.0.1:${port}`;
    const workerBase = `http://127.0.0.1:${metricsPort}`;
    await expectReady(base);
    await expectReady(workerBase);
    expect((await heartbeat('mail-maintenance')).pid).toBe(worker.child.pid);
    await waitFor(async () => ((await completedJobs(workerBase, 'mail-maintenance', MaintenanceJob.WorkerHeartbeat)) >= 1 ? true : null));
    // Static assets the image must carry: Swagger UI and the queue dashboard's UI.
    expect((await fetch(`${base}/docs/`)).status).toBe(200);
    const board = await fetch(`${base}/admin/queues`, { headers: { Authorization: `Bearer ${adminToken}` } });
    expect(board.status).toBe(200);
    expect(
      (await fetch(`${base}/admin/queues/static/images/logo.svg`, { headers: { Authorization: `Bearer ${adminToken}` } })).status,
    ).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  }, 60_000);

  it('platform-api: migrate, API and worker run from the pruned production install', async () => {
    const tree = trees['platform-api'];
    expectProductionDependenciesOnly(tree);
    expect(existsSync(path.join(tree, 'apps/mail-api'))).toBe(false);
    const db = await createTestDatabase('prodtree_platform');
    databases.push(db);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const password = randomBytes(12).toString('hex');
    const environment = env({
      PLATFORM_DATABASE_URL: db.url,
      PLATFORM_PORT: String(port),
      PLATFORM_WORKER_METRICS_PORT: String(metricsPort),
      DATA_DIR: path.join(root, 'platform-data'),
      AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
      CONSENT_INTEGRITY_SECRET: randomBytes(32).toString('hex'),
      PLATFORM_BOOTSTRAP_ADMIN_EMAIL: 'ops-admin@example.com',
      PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: password,
    });
    expect((await migrate(tree, 'platform-api', environment)).length).toBeGreaterThan(0);
    const api = start('platform-api', tree, 'apps/platform-api/dist/main.js', environment, 'platform-api listening on');
    const worker = start('platform-worker', tree, 'apps/platform-api/dist/worker.js', environment, 'platform worker consuming');
    await Promise.all([api.ready, worker.ready]);

    const base = `http://127.0.0.1:${port}`;
    const workerBase = `http://127.0.0.1:${metricsPort}`;
    await expectReady(base);
    await expectReady(workerBase);
    expect((await heartbeat('platform-maintenance')).pid).toBe(worker.child.pid);
    await waitFor(async () =>
      (await completedJobs(workerBase, 'platform-maintenance', MaintenanceJob.WorkerHeartbeat)) >= 1 ? true : null,
    );
    // The bootstrap super administrator logs in (argon2's native build is in the tree) and opens the dashboard.
    const login = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'ops-admin@example.com', password }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const board = await fetch(`${base}/admin/queues/api/queues`, { headers: { Authorization: `Bearer ${token}` } });
    expect(board.status).toBe(200);
    expect(((await board.json()) as { queues: { name: string }[] }).queues.map((q) => q.name)).toContain('platform-maintenance');
    expect((await fetch(`${base}/docs/`)).status).toBe(200);
  }, 60_000);
});
