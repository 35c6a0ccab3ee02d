import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WorkerHeartbeatPayload } from '@app/contracts';

export function heartbeatKey(prefix: string, probeId: string): string {
  return `${prefix}:heartbeat:${probeId}`;
}

/**
 * Answers a heartbeat probe: proves that a worker of this deployment consumes the queue. Each app's
 * maintenance processor delegates here. SET overwrites, so a retried or duplicated job leaves one answer.
 */
export async function answerHeartbeat(redis: Redis, prefix: string, job: Job<WorkerHeartbeatPayload>): Promise<{ processedAt: string }> {
  const processedAt = new Date().toISOString();
  await redis.set(
    heartbeatKey(prefix, job.data.probeId),
    JSON.stringify({ requestedAt: job.data.requestedAt, processedAt, pid: process.pid }),
    'EX',
    600,
  );
  return { processedAt };
}
