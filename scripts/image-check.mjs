#!/usr/bin/env node
// `npm run image:check`: builds both images with the container engine of the machine (podman, else
// docker with a reachable daemon), enforces the size budgets, and starts migrate, api and worker from
// each image against the compose Postgres and Redis, waiting for the image's HEALTHCHECK to report
// healthy. CI machines usually have no engine: then it says so and exits 0 without checking anything
// (`--require-engine` makes that an error).
//
// Budgets (uncompressed, as `<engine> image inspect` reports Size): platform-api <= 350 MB,
// mail-api <= 250 MB.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const MB = 1024 * 1024;
export const IMAGES = [
  { app: 'platform-api', budgetMb: 350, apiPort: 3000, metricsPort: 9464, db: 'PLATFORM_DATABASE_URL' },
  { app: 'mail-api', budgetMb: 250, apiPort: 3001, metricsPort: 9465, db: 'MAIL_DATABASE_URL' },
];

/** The engine to use: podman, or docker when its daemon answers; null when neither can build. */
export function findEngine(env = process.env) {
  for (const engine of ['podman', 'docker']) {
    const probe = spawnSync(engine, ['info'], { env, stdio: 'ignore', timeout: 15_000 });
    if (probe.status === 0) return engine;
  }
  return null;
}

function sh(engine, args, options = {}) {
  return execFileSync(engine, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options }).trim();
}

async function waitHealthy(engine, container, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = sh(engine, ['inspect', '--format', '{{.State.Health.Status}}', container]);
    if (status === 'healthy') return;
    if (status === 'unhealthy' || Date.now() > until) throw new Error(`${container}: HEALTHCHECK ${status}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function main() {
  const engine = findEngine();
  if (!engine) {
    console.log(
      'image:check: no container engine on this machine (podman, or docker with a running daemon): nothing was built or checked.',
    );
    process.exit(process.argv.includes('--require-engine') ? 1 : 0);
  }
  const run = `imgchk-${randomBytes(3).toString('hex')}`;
  const network = `${run}-net`;
  const containers = [];
  const problems = [];
  try {
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
    const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(path.join(REPO, 'docker/Dockerfile'), 'utf8'))?.[1];
    for (const image of IMAGES) {
      const tag = `backoffice/${image.app}:image-check`;
      console.log(`image:check: building ${tag} with ${engine}`);
      sh(
        engine,
        [
          'build',
          '-f',
          'docker/Dockerfile',
          '--build-arg',
          `NODE_IMAGE=docker.io/library/${nodeImage}`,
          '--build-arg',
          `APP=${image.app}`,
          '--build-arg',
          `API_PORT=${image.apiPort}`,
          '--build-arg',
          `METRICS_PORT=${image.metricsPort}`,
          '-t',
          tag,
          '.',
        ],
        { stdio: 'inherit' },
      );
      const size = Number(sh(engine, ['image', 'inspect', '--format', '{{.Size}}', tag]));
      const line = `${image.app}: ${(size / MB).toFixed(0)} MB (budget ${image.budgetMb} MB, uncompressed)`;
      console.log(`image:check: ${line}`);
      if (size > image.budgetMb * MB) problems.push(`${line}: over budget`);
      const env = [
        'NODE_ENV=production',
        `${image.db}=postgres://postgres:${password}@${run}-postgres:5432/${image.app.replace('-api', '')}`,
        `REDIS_URL=redis://${run}-redis:6379`,
        `AUTH_JWT_SECRET=${randomBytes(32).toString('hex')}`,
        `CONSENT_INTEGRITY_SECRET=${randomBytes(32).toString('hex')}`,
        `MAIL_LINK_SECRET=${randomBytes(32).toString('hex')}`,
        `MAIL_SECRETS_KEY=${randomBytes(32).toString('hex')}`,
      ].flatMap((e) => ['-e', e]);
      const base = ['run', '--network', network, '--read-only', '--tmpfs', '/tmp', ...env];
      sh(engine, [...base, '--rm', tag, 'migrate'], { stdio: 'inherit' });
      for (const role of ['api', 'worker']) {
        const name = `${run}-${image.app}-${role}`;
        containers.push(name);
        sh(engine, [...base, '-d', '--name', name, '--health-interval', '3s', tag, role]);
        await waitHealthy(engine, name).catch((err) => problems.push(`${image.app} ${role}: ${err.message}`));
      }
    }
  } finally {
    for (const name of containers) spawnSync(engine, ['rm', '-f', name], { stdio: 'ignore' });
    spawnSync(engine, ['network', 'rm', network], { stdio: 'ignore' });
  }
  if (problems.length) {
    console.error(`image:check: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
    process.exit(1);
  }
  console.log('image:check: both images built, within budget, migrate ran, api and worker healthy');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`image:check: ${err.message}`);
    process.exit(1);
  });
}
