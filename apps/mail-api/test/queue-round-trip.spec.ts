import { describe, expect, it } from '@jest/globals';
import { MaintenanceJob } from '@app/contracts';
import { QueueService, WorkerRunner } from '@app/service-kit';
import { heartbeatRoundTripProblems, unknownJobProblems } from '@app/service-kit/testing';
import { apiWithWorkerForSuite } from '@app/service-kit/testing/jest';
import { CAMPAIGN_QUEUE, CampaignJob } from '../src/modules/campaigns/campaigns.queue.js';
import { EMAIL_QUEUE, MailEmailJob } from '../src/modules/delivery/email-delivery.queue.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { MailWorkflowJob, WORKFLOW_QUEUE } from '../src/modules/workflows/workflows.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { startMailApp } from './support/mail-test-app.js';

describe('mail BullMQ round trip through a real Redis', () => {
  const rig = apiWithWorkerForSuite(
    () => startMailApp(),
    (config) => WorkerModule.forRoot(config),
  );

  it('the worker discovers the processors the modules declare', () => {
    const handlers = rig.worker.get(WorkerRunner).discoverHandlers();
    expect([...handlers.keys()].sort()).toEqual([EMAIL_QUEUE, MAINTENANCE_QUEUE, WORKFLOW_QUEUE, CAMPAIGN_QUEUE].sort());
    expect([...(handlers.get(MAINTENANCE_QUEUE)?.keys() ?? [])].sort()).toEqual(
      [
        MaintenanceJob.WorkerHeartbeat,
        MailMaintenanceJob.RecheckDomains,
        MailMaintenanceJob.RequeueEmails,
        MailMaintenanceJob.PurgeIdempotencyKeys,
        MailMaintenanceJob.PurgeSendRequests,
        MailMaintenanceJob.SweepWorkflows,
        MailMaintenanceJob.SweepCampaigns,
      ].sort(),
    );
    expect([...(handlers.get(EMAIL_QUEUE)?.keys() ?? [])]).toEqual([MailEmailJob.Deliver]);
    expect([...(handlers.get(CAMPAIGN_QUEUE)?.keys() ?? [])].sort()).toEqual([CampaignJob.Dispatch, CampaignJob.Batch].sort());
    expect([...(handlers.get(WORKFLOW_QUEUE)?.keys() ?? [])].sort()).toEqual([MailWorkflowJob.Step, MailWorkflowJob.Trigger].sort());
  });

  it('a heartbeat enqueued by the API is processed by the worker', async () => {
    expect(await rig.worker.get(WorkerRunner).start({ concurrency: 2, queues: [MAINTENANCE_QUEUE] })).toEqual([MAINTENANCE_QUEUE]);
    const queues = rig.api.app.get(QueueService);
    expect(await heartbeatRoundTripProblems(queues, MAINTENANCE_QUEUE, rig.redis, rig.api.config.queuePrefix)).toEqual([]);
  });

  it('a job with an unknown name fails without retries', async () => {
    expect(await unknownJobProblems(rig.api.app.get(QueueService), MAINTENANCE_QUEUE)).toEqual([]);
  });
});
