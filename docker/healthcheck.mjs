// The image's HEALTHCHECK: GET /healthz of the process the container runs. An API answers on its
// HTTP port (PLATFORM_PORT / MAIL_PORT), a worker on its metrics port (*_WORKER_METRICS_PORT); the
// role is the entry point's command, read from PID 1 (tini -- node /app/docker/entrypoint.mjs <command>).
// A migrate or cli container has nothing to probe and is healthy while it runs.
import { readFileSync } from 'node:fs';

const DEFAULTS = {
  'platform-api': { apiVar: 'PLATFORM_PORT', api: 3000, workerVar: 'PLATFORM_WORKER_METRICS_PORT', worker: 9464 },
  'mail-api': { apiVar: 'MAIL_PORT', api: 3001, workerVar: 'MAIL_WORKER_METRICS_PORT', worker: 9465 },
};

function role() {
  try {
    const args = readFileSync('/proc/1/cmdline', 'utf8').split('\0').filter(Boolean);
    const entry = args.findIndex((arg) => arg.endsWith('entrypoint.mjs'));
    return entry === -1 ? 'api' : (args[entry + 1] ?? 'api');
  } catch {
    return 'api';
  }
}

const app = DEFAULTS[process.env.APP ?? ''];
const kind = role();
if (!app) {
  console.error(`healthcheck: unknown APP "${process.env.APP}"`);
  process.exit(1);
}
if (kind !== 'api' && kind !== 'worker') process.exit(0);
const port = Number(process.env[kind === 'api' ? app.apiVar : app.workerVar] || (kind === 'api' ? app.api : app.worker));
try {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`healthcheck: ${kind} on port ${port}: ${err.message}`);
  process.exit(1);
}
