import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Job, Queue } from 'bullmq';
import { WorkerRunner, type WorkerRunnerStartOptions } from '../queue/worker-runner.service.js';
import { waitFor } from './wait-for.js';

/**
 * An app's worker in the test's own process: the context its `worker.ts` builds (`WorkerModule.forRoot(config)`),
 * logs off, consuming `queues` (every queue it has processors for when omitted). `close()` it after the test.
 * A test that kills a worker runs `dist/worker.js` instead (startNodeProcess).
 */
export async function startInProcessWorker(
  workerModule: DynamicModule,
  options: WorkerRunnerStartOptions = {},
): Promise<INestApplicationContext> {
  const worker = await NestFactory.createApplicationContext(workerModule, { logger: false });
  try {
    await worker.get(WorkerRunner).start(options);
  } catch (err) {
    await worker.close();
    throw err;
  }
  return worker;
}

/** The job once it has finished, completed or failed for good (a retried attempt is not finished). */
export function waitForFinishedJob(queue: Queue, jobId: string, timeoutMs = 10_000): Promise<Job> {
  return waitFor(
    async () => {
      const job = await queue.getJob(jobId);
      return job?.finishedOn ? job : null;
    },
    timeoutMs,
    `job ${jobId} to finish`,
  );
}
