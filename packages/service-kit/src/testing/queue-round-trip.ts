import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { MaintenanceJob } from '@app/contracts';
import { heartbeatKey } from '../queue/heartbeat.js';
import type { QueueService } from '../queue/queue.service.js';
import { waitForFinishedJob } from './in-process-worker.js';
import { waitFor } from './wait-for.js';

/** `what: got <actual>` when `actual` is not `expected` (compared as JSON), else nothing. */
function differs(what: string, actual: unknown, expected: unknown): string[] {
  return JSON.stringify(actual) === JSON.stringify(expected)
    ? []
    : [`${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
}

/**
 * Enqueues a worker heartbeat on `queue` through the API's QueueService and waits for a running
 * worker to answer it in Redis (under the queue prefix: this process's pid, the request's time) and
 * for the job to complete with `{processedAt}`. Answers what was not so; empty: the round trip works.
 */
export async function heartbeatRoundTripProblems(
  queues: QueueService,
  queue: string,
  redis: Redis,
  queuePrefix: string,
): Promise<string[]> {
  const probeId = randomUUID();
  const requestedAt = new Date().toISOString();
  const jobId = await queues.add(queue, MaintenanceJob.WorkerHeartbeat, { probeId, requestedAt });
  if (!jobId) return ['the heartbeat job got no id'];
  const answer = JSON.parse(await waitFor(() => redis.get(heartbeatKey(queuePrefix, probeId)), 10_000, 'the heartbeat answer')) as {
    requestedAt?: string;
    pid?: number;
  };
  // The answer is written while the job runs; its completion is recorded just after.
  const job = await waitForFinishedJob(queues.queue(queue), jobId);
  const returned = job.returnvalue as { processedAt?: unknown } | null;
  return [
    ...differs('answer', { requestedAt: answer.requestedAt, pid: answer.pid }, { requestedAt, pid: process.pid }),
    ...differs('state', await job.getState(), 'completed'),
    ...differs('return value', Object.keys(returned ?? {}), ['processedAt']),
    ...(typeof returned?.processedAt === 'string' ? [] : ['processedAt is not a string']),
  ];
}

/**
 * Adds a job no handler knows (3 attempts allowed) and answers how its end differs from the rule:
 * failed once, `no handler for job <queue>/no.such.job`, without retries. Empty: as it should.
 */
export async function unknownJobProblems(queues: QueueService, queue: string): Promise<string[]> {
  const job = await queues.queue(queue).add('no.such.job', {}, { attempts: 3 });
  // Waits for the job to finish either way (a retried attempt is not finished), then reads how.
  const finished = await waitForFinishedJob(queues.queue(queue), job.id ?? '');
  return [
    ...differs('state', await finished.getState(), 'failed'),
    ...differs('failed reason', finished.failedReason, `no handler for job ${queue}/no.such.job`),
    ...differs('attempts made', finished.attemptsMade, 1),
  ];
}
