#!/usr/bin/env node
// `npm run image:check`: builds both images with the container engine of the machine (podman, else
// docker with a reachable daemon), enforces the size budgets, and starts migrate, api and worker from
// each image against a Postgres and a Redis, waiting for the image's HEALTHCHECK to pass, and shows the
// HEALTHCHECK failing: an api whose process stops answering (SIGSTOP) turns unhealthy. CI machines
// usually have no engine: then it says so and exits 0 without checking anything (`--require-engine`
// makes that an error).
//
// Budgets (uncompressed, as `<engine> image inspect` reports Size): platform-api <= 350 MB,
// mail-api <= 250 MB.
//
// Usage: npm run image:check -- [--require-engine] [--node-image <ref>] [--runtime-image <ref>]
//                                 [--host-services] [--record]
//   --node-image     the Dockerfile's NODE_IMAGE (default: docker.io/library/ + the Dockerfile's default);
//                    e.g. localhost/node:24.21.0-bookworm-slim from docker/build-local-base.sh on a
//                    machine that cannot pull from Docker Hub
//   --runtime-image  the Dockerfile's RUNTIME_IMAGE (default: the Dockerfile's, gcr.io/distroless/...);
//                    e.g. localhost/distroless/cc-debian12 from docker/build-local-base.sh
//   --host-services  no Postgres and Redis containers (pulled from Docker Hub): the host's, on the host
//                    network (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, and
//                    REDIS_URL, default redis://127.0.0.1:6379); a throwaway database per app and a
//                    private queue prefix, dropped after; free ports for the APIs and worker metrics
//   --record         writes bench/results/image-check.json (sizes, budgets, what passed, the engine)
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const MB = 1024 * 1024;
/** tini's exit when node ended by the SIGTERM it forwarded: 128 + 15. */
const SIGTERM_EXIT = 143;
export const IMAGES = [
  { app: 'platform-api', budgetMb: 350, apiPort: 3000, metricsPort: 9464 },
  { app: 'mail-api', budgetMb: 250, apiPort: 3001, metricsPort: 9465 },
];
/** The app's variables (config schema): PLATFORM_DATABASE_URL, PLATFORM_PORT, PLATFORM_WORKER_METRICS_PORT; MAIL_... */
const variable = (app, name) => `${app.replace('-api', '').toUpperCase()}_${name}`;

/** The engine to use: podman, or docker when its daemon answers; null when neither can build. */
export function findEngine(env = process.env) {
  for (const engine of ['podman', 'docker']) {
    const probe = spawnSync(engine, ['info'], { env, stdio: 'ignore', timeout: 15_000 });
    if (probe.status === 0) return engine;
  }
  return null;
}

/** Runs the engine; its output trimmed (nothing with `stdio: 'inherit'`, which shows it instead). */
function sh(engine, args, options = {}) {
  const out = execFileSync(engine, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
  return (out ?? '').trim();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for the container's HEALTHCHECK to pass. Docker runs it on its interval and reports the
 * status; podman runs it from systemd timers, absent in containers and CI sandboxes, so it is run
 * here with `podman healthcheck run` (the image's own command, as the timer would).
 */
async function waitHealthy(engine, container, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const running = sh(engine, ['inspect', '--format', '{{.State.Running}}', container]);
    if (running !== 'true') throw new Error(`${container}: exited before its HEALTHCHECK passed`);
    let status;
    if (engine === 'podman') {
      const check = spawnSync('podman', ['healthcheck', 'run', container], { encoding: 'utf8' });
      status = check.status === 0 ? 'healthy' : `unhealthy (${(check.stdout + check.stderr).trim() || `exit ${check.status}`})`;
    } else {
      status = sh(engine, ['inspect', '--format', '{{.State.Health.Status}}', container]);
      if (status === 'unhealthy') throw new Error(`${container}: HEALTHCHECK unhealthy`);
    }
    if (status === 'healthy') return;
    if (Date.now() > until) throw new Error(`${container}: HEALTHCHECK ${status} after ${timeoutMs / 1000} s`);
    await sleep(2000);
  }
}

/** The HEALTHCHECK's status now: podman runs the check here, docker reports its last result. */
function healthStatus(engine, container) {
  if (engine !== 'podman') return sh(engine, ['inspect', '--format', '{{.State.Health.Status}}', container]);
  const check = spawnSync('podman', ['healthcheck', 'run', container], { encoding: 'utf8' });
  return check.status === 0 ? 'healthy' : (check.stdout + check.stderr).trim() || `exit ${check.status}`;
}

/**
 * The HEALTHCHECK must also fail: the API's node process is stopped (SIGSTOP, as a process wedged on a
 * busy event loop: it keeps its port, answers nothing), so GET /healthz times out. No shell in the
 * image: the image's node sends the signal. Podman reports `unhealthy` once the check fails (its
 * retries count only for the timer), docker after --retries failed checks (3 x 15 s). Then SIGCONT
 * and the check must pass again (the failure was the stop, not the probe).
 */
async function checkTurnsUnhealthy(engine, container, timeoutMs = 90_000) {
  const signal = (name) =>
    sh(engine, [
      'exec',
      container,
      '/usr/bin/node',
      '-e',
      // The app's node: the process (not PID 1, tini) whose command line names the entry point.
      `const fs=require('fs');for(const p of fs.readdirSync('/proc').filter((d)=>/^\\d+$/.test(d)&&d!=='1'&&d!==String(process.pid))){` +
        `try{if(fs.readFileSync('/proc/'+p+'/cmdline','utf8').includes('entrypoint.mjs'))process.kill(Number(p),'${name}')}catch{}}`,
    ]);
  signal('SIGSTOP');
  const until = Date.now() + timeoutMs;
  let status = healthStatus(engine, container);
  while (!/unhealthy|exit 1|timeout/i.test(status) && Date.now() < until) {
    await sleep(3000);
    status = healthStatus(engine, container);
  }
  console.log(`image:check: ${container} with its node process stopped: HEALTHCHECK ${status}`);
  signal('SIGCONT');
  if (!/unhealthy|exit 1|timeout/i.test(status)) return `still ${status} after ${timeoutMs / 1000} s`;
  await waitHealthy(engine, container);
  return 'unhealthy';
}

/**
 * `stop`: SIGTERM to PID 1 (tini), which forwards it to node. The app drains, then Nest's shutdown
 * hooks re-raise the signal: node ends by SIGTERM and tini exits 143 (128 + 15), what the apps'
 * ops-graceful-shutdown specs expect of the process (those prove the drain itself). An exit 137 is
 * the engine's SIGKILL after the 60 s grace: the signal did not reach the app's shutdown.
 */
function stopGracefully(engine, container) {
  const started = Date.now();
  sh(engine, ['stop', '-t', '60', container]);
  const code = Number(sh(engine, ['inspect', '--format', '{{.State.ExitCode}}', container]));
  return { code, seconds: Number(((Date.now() - started) / 1000).toFixed(1)) };
}

/** Postgres and Redis for the containers: throwaway containers on a private network, or the host's. */
async function startServices(engine, run, hostServices, containers) {
  if (hostServices) {
    const { freePort } = await import('./lib/probes.mjs');
    const { withDatabase } = await import('./lib/apps.mjs');
    const postgres = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const redis = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    return {
      network: 'host',
      databaseUrl: (app) => withDatabase(postgres, `${run.replace(/-/g, '_')}_${app.replace('-api', '')}`),
      redisUrl: redis,
      ports: async () => ({ api: await freePort(), metrics: await freePort() }),
    };
  }
  const network = `${run}-net`;
  sh(engine, ['network', 'create', network]);
  const password = randomBytes(12).toString('hex');
  containers.push(`${run}-postgres`, `${run}-redis`);
  sh(engine, [
    'run',
    '-d',
    '--name',
    `${run}-postgres`,
    '--network',
    network,
    '-e',
    `POSTGRES_PASSWORD=${password}`,
    // Fully qualified: podman resolves no short names without a registries.conf search list.
    'docker.io/library/postgres:17-bookworm',
  ]);
  sh(engine, ['run', '-d', '--name', `${run}-redis`, '--network', network, 'docker.io/library/redis:7-bookworm']);
  return {
    network,
    databaseUrl: (app) => `postgres://postgres:${password}@${run}-postgres:5432/${app.replace('-api', '')}`,
    redisUrl: `redis://${run}-redis:6379`,
    ports: async () => null,
  };
}

/** Builds one image; returns its uncompressed size in bytes and whether it carries the HEALTHCHECK. */
function build(engine, image, { tag, nodeImage, runtimeImage, network }) {
  const args = ['build', '-f', 'docker/Dockerfile'];
  // podman's default OCI image format has no HEALTHCHECK: the docker format keeps it.
  if (engine === 'podman') args.push('--format', 'docker');
  if (network === 'host') args.push('--network', 'host');
  args.push(
    ...['--build-arg', `NODE_IMAGE=${nodeImage}`, '--build-arg', `RUNTIME_IMAGE=${runtimeImage}`, '--build-arg', `APP=${image.app}`],
    ...['--build-arg', `API_PORT=${image.apiPort}`, '--build-arg', `METRICS_PORT=${image.metricsPort}`, '-t', tag, '.'],
  );
  sh(engine, args, { stdio: 'inherit' });
  const size = Number(sh(engine, ['image', 'inspect', '--format', '{{.Size}}', tag]));
  const healthcheck = sh(engine, ['image', 'inspect', '--format', '{{json .Config.Healthcheck}}', tag]);
  return { size, healthcheck: healthcheck !== 'null' && healthcheck.includes('healthcheck.mjs') };
}

async function checkImage(engine, image, { run, nodeImage, runtimeImage, services, containers, cleanups }) {
  const result = { app: image.app, budgetMb: image.budgetMb };
  const tag = `localhost/backoffice/${image.app}:image-check`;
  console.log(`image:check: building ${tag} with ${engine} on ${nodeImage}, runtime ${runtimeImage}`);
  const started = Date.now();
  const built = build(engine, image, { tag, nodeImage, runtimeImage, network: services.network });
  result.buildSeconds = Math.round((Date.now() - started) / 1000);
  result.sizeMb = Number((built.size / MB).toFixed(1));
  result.withinBudget = built.size <= image.budgetMb * MB;
  result.healthcheckInImage = built.healthcheck;
  console.log(`image:check: ${image.app}: ${result.sizeMb} MB (budget ${image.budgetMb} MB, uncompressed)`);
  const problems = [];
  if (!result.withinBudget) problems.push(`${image.app}: ${result.sizeMb} MB, over its ${image.budgetMb} MB budget`);
  if (!result.healthcheckInImage) problems.push(`${image.app}: the image has no HEALTHCHECK running docker/healthcheck.mjs`);

  const databaseUrl = services.databaseUrl(image.app);
  const queuePrefix = `${run}-${image.app}`;
  if (services.network === 'host') {
    const { dropDatabase, deleteRedisKeys } = await import('./lib/databases.mjs');
    cleanups.push(
      () => dropDatabase(databaseUrl),
      () => deleteRedisKeys(services.redisUrl, queuePrefix),
    );
  }
  const env = [
    'NODE_ENV=production',
    `${variable(image.app, 'DATABASE_URL')}=${databaseUrl}`,
    `REDIS_URL=${services.redisUrl}`,
    `QUEUE_PREFIX=${queuePrefix}`,
    `AUTH_JWT_SECRET=${randomBytes(32).toString('hex')}`,
    `CONSENT_INTEGRITY_SECRET=${randomBytes(32).toString('hex')}`,
    `MAIL_LINK_SECRET=${randomBytes(32).toString('hex')}`,
    `MAIL_SECRETS_KEY=${randomBytes(32).toString('hex')}`,
  ];
  const ports = await services.ports();
  if (ports) env.push(`${variable(image.app, 'PORT')}=${ports.api}`, `${variable(image.app, 'WORKER_METRICS_PORT')}=${ports.metrics}`);
  const base = [
    'run',
    '--network',
    services.network,
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/data',
    ...env.flatMap((e) => ['-e', e]),
  ];
  sh(engine, [...base, '--rm', tag, 'migrate'], { stdio: 'inherit' });
  result.migrate = 'ok';
  for (const role of ['api', 'worker']) {
    const name = `${run}-${image.app}-${role}`;
    containers.push(name);
    sh(engine, [...base, '-d', '--name', name, tag, role]);
    try {
      await waitHealthy(engine, name);
      result[role] = 'healthy';
    } catch (err) {
      result[role] = err.message;
      problems.push(`${image.app} ${role}: ${err.message}`);
      spawnSync(engine, ['logs', '--tail', '30', name], { stdio: 'inherit' });
    }
  }
  if (result.api === 'healthy') {
    result.apiStopped = await checkTurnsUnhealthy(engine, `${run}-${image.app}-api`);
    if (result.apiStopped !== 'unhealthy') problems.push(`${image.app} api stopped answering: HEALTHCHECK ${result.apiStopped}`);
  }
  for (const role of ['api', 'worker']) {
    if (result[role] !== 'healthy') continue;
    const exit = stopGracefully(engine, `${run}-${image.app}-${role}`);
    result[`${role}Sigterm`] = `exit ${exit.code} after ${exit.seconds} s`;
    if (exit.code !== SIGTERM_EXIT) problems.push(`${image.app} ${role}: SIGTERM ended it with exit ${exit.code}, not ${SIGTERM_EXIT}`);
  }
  return { result, problems };
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const engine = findEngine();
  if (!engine) {
    console.log(
      'image:check: no container engine on this machine (podman, or docker with a running daemon): nothing was built or checked.',
    );
    process.exit(args.includes('--require-engine') ? 1 : 0);
  }
  const dockerfileDefault = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(path.join(REPO, 'docker/Dockerfile'), 'utf8'))?.[1];
  const nodeImage = option('--node-image') ?? `docker.io/library/${dockerfileDefault}`;
  const runtimeImage =
    option('--runtime-image') ?? /^ARG RUNTIME_IMAGE=(\S+)$/m.exec(readFileSync(path.join(REPO, 'docker/Dockerfile'), 'utf8'))?.[1];
  const hostServices = args.includes('--host-services');
  // Imported now: the result file's load average "at start" is taken when the module loads.
  const recorder = args.includes('--record') ? await import('../bench/lib/results.mjs') : null;
  const run = `imgchk-${randomBytes(3).toString('hex')}`;
  const containers = [];
  const cleanups = [];
  const results = [];
  const problems = [];
  try {
    const services = await startServices(engine, run, hostServices, containers);
    for (const image of IMAGES) {
      try {
        const checked = await checkImage(engine, image, { run, nodeImage, runtimeImage, services, containers, cleanups });
        results.push(checked.result);
        problems.push(...checked.problems);
      } catch (err) {
        results.push({ app: image.app, budgetMb: image.budgetMb, error: err.message });
        problems.push(`${image.app}: ${err.message}`);
      }
    }
  } finally {
    for (const name of containers) spawnSync(engine, ['rm', '-f', '-t', '5', name], { stdio: 'ignore' });
    if (!hostServices) spawnSync(engine, ['network', 'rm', `${run}-net`], { stdio: 'ignore' });
    for (const cleanup of cleanups) await cleanup().catch((err) => console.error(`image:check: cleanup: ${err.message}`));
  }
  if (recorder) {
    const { writeBenchResult } = recorder;
    const file = path.join(REPO, 'bench/results/image-check.json');
    writeBenchResult(
      file,
      { images: results, problems },
      {
        engine: `${engine} ${sh(engine, ['--version'])}`,
        nodeImage,
        runtimeImage,
        services: hostServices ? 'host Postgres and Redis, host network' : 'containers',
      },
    );
    console.log(`image:check: recorded in ${path.relative(REPO, file)}`);
  }
  if (problems.length) {
    console.error(`image:check: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
    process.exit(1);
  }
  console.log(
    'image:check: both images built, within budget, migrate ran, api and worker healthy, a stopped api unhealthy, SIGTERM graceful',
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`image:check: ${err.message}`);
    process.exit(1);
  });
}
