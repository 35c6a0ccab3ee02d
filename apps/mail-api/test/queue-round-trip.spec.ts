import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { Redis } from 'ioredis';
import { MaintenanceJob } from '@app/contracts';
import { heartbeatKey, QueueService, WorkerRunner } from '@app/service-kit';
import { waitFor, waitForFinishedJob } from '@app/service-kit/testing';
import { CAMPAIGN_QUEUE, CampaignJob } from '../src/modules/campaigns/campaigns.queue.js';
import { EMAIL_QUEUE, MailEmailJob } from '../src/modules/delivery/email-delivery.queue.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { MailWorkflowJob, WORKFLOW_QUEUE } from '../src/modules/workflows/workflows.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

describe('mail BullMQ round trip through a real Redis', () => {
  let api: MailTestApp;
  let worker: INestApplicationContext;
  let redis: Redis;
  beforeAll(async () => {
    api = await startMailApp();
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(api.config), { logger: false });
    redis = new Redis(api.config.redisUrl);
  });
  afterAll(async () => {
    await worker.close();
    redis.disconnect();
    await api.close();
  });

  it('the worker discovers the processors the modules declare', () => {
    const handlers = worker.get(WorkerRunner).discoverHandlers();
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
    expect(await worker.get(WorkerRunner).start({ concurrency: 2, queues: [MAINTENANCE_QUEUE] })).toEqual([MAINTENANCE_QUEUE]);
    const probeId = randomUUID();
    const requestedAt = new Date().toISOString();
    const jobId = await api.app.get(QueueService).add(MAINTENANCE_QUEUE, MaintenanceJob.WorkerHeartbeat, { probeId, requestedAt });
    expect(jobId).toBeDefined();
    const answer = await waitFor(() => redis.get(heartbeatKey(api.config.queuePrefix, probeId)), 10_000, 'the heartbeat answer');
    expect(JSON.parse(answer)).toMatchObject({ requestedAt, pid: process.pid });
    // The answer is written while the job runs; its completion is recorded just after.
    const queue = api.app.get(QueueService).queue(MAINTENANCE_QUEUE);
    const job = await waitForFinishedJob(queue, jobId!);
    expect(await job.getState()).toBe('completed');
    expect(job.returnvalue).toEqual({ processedAt: expect.any(String) });
  });

  it('a job with an unknown name fails without retries', async () => {
    const queue = api.app.get(QueueService).queue(MAINTENANCE_QUEUE);
    const job = await queue.add('no.such.job', {}, { attempts: 3 });
    // Waits for the job to finish either way (a retried attempt is not finished), then checks how.
    const finished = await waitForFinishedJob(queue, job.id!);
    expect(await finished.getState()).toBe('failed');
    expect(finished.failedReason).toBe(`no handler for job ${MAINTENANCE_QUEUE}/no.such.job`);
    expect(finished.attemptsMade).toBe(1);
  });
});
