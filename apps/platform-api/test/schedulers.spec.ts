import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker, waitFor } from '@app/service-kit/testing';
import { MAINTENANCE_QUEUE, PlatformMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { RecurringJobs } from '../src/modules/maintenance/recurring-jobs.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { processEnv, startWorkerProcess, type WorkerProcess } from './support/app-process.js';

const PURGE = PlatformMaintenanceJob.PurgeExpired;

/** The job schedulers stored in Redis for the queue, as BullMQ reads them back. */
async function schedulersOf(queue: Queue): Promise<{ id: string; name: string; every?: number }[]> {
  const all = await queue.getJobSchedulers(0, -1, true);
  return all.map((s) => ({ id: s.key, name: s.name, every: s.every })).sort((a, b) => a.id.localeCompare(b.id));
}

/** Finished runs of the purge that a scheduler produced (BullMQ stamps them with the scheduler's id). */
async function scheduledPurgeRuns(queue: Queue) {
  const jobs = await queue.getJobs(['completed', 'failed']);
  return jobs.filter((j) => j.name === PURGE && j.repeatJobKey === PURGE);
}

/**
 * The worker's recurring jobs (src/modules/maintenance/recurring-jobs.ts) against the real Redis
 * queue: what the compiled worker (`node dist/worker.js`, built by `npm run build -w platform-api`)
 * registers, and scheduled runs doing their work in Postgres. The processor is never called here.
 */
describe('platform job schedulers', () => {
  let t: PlatformTestApp;
  let ds: DataSource;
  let queue: Queue;
  let user: { id: string };
  let tenant: { id: string };
  const workers: WorkerProcess[] = [];
  let inProcess: INestApplicationContext | null = null;

  const insertSession = async (expires: string): Promise<string> => {
    const [row] = await ds.query(
      `INSERT INTO sessions (tenant_id, user_id, session_token_hash, expires_at) VALUES ($1, $2, $3, now() + $4::interval) RETURNING id`,
      [tenant.id, user.id, `scheduler-${randomUUID()}`, expires],
    );
    return row.id;
  };
  const sessionExists = async (id: string) => (await ds.query(`SELECT 1 FROM sessions WHERE id = $1`, [id])).length === 1;

  beforeAll(async () => {
    t = await startPlatformApp();
    ds = t.app.get(DataSource);
    queue = t.app.get(QueueService).queue(MAINTENANCE_QUEUE);
    const f = Factories.of(t);
    tenant = await f.tenant();
    user = await f.user(tenant as { id: string; organizationId: string }, { password: null });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) {
      const exit = await w.kill('SIGTERM');
      if (exit.code !== null) throw new Error(`worker ${w.name} exited with ${exit.code}:\n${w.output()}`);
    }
    await inProcess?.close();
    inProcess = null;
    // Each test starts without schedulers or jobs.
    await queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function startWorker(name: string): Promise<WorkerProcess> {
    const worker = startWorkerProcess(name, processEnv(t.config));
    workers.push(worker);
    await worker.ready;
    return worker;
  }

  it('the worker process registers the purge hourly; a second worker process makes no second schedule', async () => {
    expect(await schedulersOf(queue)).toEqual([]);
    await startWorker('A');
    // The hourly housekeeping purge (the spec's "purge hourly"): one scheduler, keyed by the job name.
    expect(await schedulersOf(queue)).toEqual([{ id: PURGE, name: PURGE, every: 3600_000 }]);
    await startWorker('B');
    expect(await schedulersOf(queue)).toEqual([{ id: PURGE, name: PURGE, every: 3600_000 }]);
  }, 60_000);

  it('the first scheduled run, at worker start, purges a session expired two days ago and keeps a live one', async () => {
    const expired = await insertSession('-2 days');
    const live = await insertSession('1 hour');
    await startWorker('A');
    const [run] = await waitFor(
      async () => ((await scheduledPurgeRuns(queue)).length > 0 ? scheduledPurgeRuns(queue) : null),
      20_000,
      'a scheduled purge run',
    );
    expect(run.returnvalue).toEqual({ sessions: 1, auth_tokens: 0, notifications: 0 });
    expect(await sessionExists(expired)).toBe(false);
    expect(await sessionExists(live)).toBe(true);
  }, 60_000);

  it('with a short interval, a later run purges a session that expired after the first run', async () => {
    // The worker's own modules in process, as worker.ts builds them, with a 1 s interval instead of 1 h.
    inProcess = await startInProcessWorker(WorkerModule.forRoot(t.config), { queues: [MAINTENANCE_QUEUE] });
    await inProcess.get(RecurringJobs).schedule({ purgeExpiredEveryMs: 1000 });
    expect(await schedulersOf(queue)).toEqual([{ id: PURGE, name: PURGE, every: 1000 }]);
    await waitFor(async () => ((await scheduledPurgeRuns(queue)).length > 0 ? true : null), 20_000, 'the first scheduled run');
    // Inserted after a run finished: only a later run of the schedule can purge it.
    const expired = await insertSession('-2 days');
    await waitFor(async () => ((await sessionExists(expired)) ? null : true), 20_000, 'a later run to purge the session');
    // The run's completion is recorded in Redis just after its DELETE commits.
    const purging = await waitFor(
      async () => {
        const runs = (await scheduledPurgeRuns(queue)).filter((j) => j.returnvalue?.sessions > 0);
        return runs.length > 0 ? runs : null;
      },
      10_000,
      'the purging run to complete',
    );
    expect(purging.map((j) => j.returnvalue)).toEqual([{ sessions: 1, auth_tokens: 0, notifications: 0 }]);
  }, 60_000);
});
