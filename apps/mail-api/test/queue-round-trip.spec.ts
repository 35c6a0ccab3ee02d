import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { Redis } from 'ioredis';
import { MailEmailJob, MailMaintenanceJob, MailQueue, MaintenanceJob } from '@app/contracts';
import { heartbeatKey, QueueService, WorkerRunner } from '@app/service-kit';
import { waitFor } from '@app/service-kit/testing';
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
    expect([...handlers.keys()].sort()).toEqual([MailQueue.Email, MailQueue.Maintenance].sort());
    expect([...(handlers.get(MailQueue.Maintenance)?.keys() ?? [])].sort()).toEqual(
      [MaintenanceJob.WorkerHeartbeat, MailMaintenanceJob.RecheckDomains, MailMaintenanceJob.RequeueEmails, MailMaintenanceJob.PurgeIdempotencyKeys, MailMaintenanceJob.PurgeSendRequests].sort(),
    );
    expect([...(handlers.get(MailQueue.Email)?.keys() ?? [])]).toEqual([MailEmailJob.Deliver]);
  });

  it('a heartbeat enqueued by the API is processed by the worker', async () => {
    expect(await worker.get(WorkerRunner).start({ concurrency: 2, queues: [MailQueue.Maintenance] })).toEqual([MailQueue.Maintenance]);
    const probeId = randomUUID();
    const requestedAt = new Date().toISOString();
    const jobId = await api.app
      .get(QueueService)
      .add(MailQueue.Maintenance, MaintenanceJob.WorkerHeartbeat, { probeId, requestedAt });
    expect(jobId).toBeDefined();
    const answer = await waitFor(() => redis.get(heartbeatKey(api.config.queuePrefix, probeId)), 10_000, 'the heartbeat answer');
    expect(JSON.parse(answer)).toMatchObject({ requestedAt, pid: process.pid });
    const job = await api.app.get(QueueService).queue(MailQueue.Maintenance).getJob(jobId!);
    expect(await job?.getState()).toBe('completed');
  });

  it('a job with an unknown name fails without retries', async () => {
    const queue = api.app.get(QueueService).queue(MailQueue.Maintenance);
    const job = await queue.add('no.such.job', {}, { attempts: 3 });
    const state = await waitFor(async () => {
      const s = await (await queue.getJob(job.id!))?.getState();
      return s === 'failed' ? s : null;
    }, 10_000, 'the job to fail');
    expect(state).toBe('failed');
    expect((await queue.getJob(job.id!))?.attemptsMade).toBe(1);
  });
});
