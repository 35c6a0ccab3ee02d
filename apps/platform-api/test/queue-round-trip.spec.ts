import { describe, expect, it } from '@jest/globals';
import { MaintenanceJob } from '@app/contracts';
import { QueueService, WorkerRunner } from '@app/service-kit';
import { heartbeatRoundTripProblems, unknownJobProblems } from '@app/service-kit/testing';
import { apiWithWorkerForSuite } from '@app/service-kit/testing/jest';
import { MAINTENANCE_QUEUE, PlatformMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { startPlatformApp } from './support/platform-test-app.js';

describe('BullMQ round trip through a real Redis', () => {
  const rig = apiWithWorkerForSuite(
    () => startPlatformApp(),
    (config) => WorkerModule.forRoot(config),
  );

  it('the worker discovers the processors the modules declare', () => {
    const handlers = rig.worker.get(WorkerRunner).discoverHandlers();
    expect([...(handlers.get(MAINTENANCE_QUEUE)?.keys() ?? [])].sort()).toEqual(
      [MaintenanceJob.WorkerHeartbeat, PlatformMaintenanceJob.PurgeExpired].sort(),
    );
  });

  it('a job enqueued by the API is processed by the worker', async () => {
    await rig.worker.get(WorkerRunner).start({ concurrency: 2 });
    const queues = rig.api.app.get(QueueService);
    expect(await heartbeatRoundTripProblems(queues, MAINTENANCE_QUEUE, rig.redis, rig.api.config.queuePrefix)).toEqual([]);
  });

  it('a job with an unknown name fails without retries', async () => {
    expect(await unknownJobProblems(rig.api.app.get(QueueService), MAINTENANCE_QUEUE)).toEqual([]);
  });
});
