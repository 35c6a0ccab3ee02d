import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { forSuite } from './for-suite.js';

/** An app under test as the apps' `start*App` helpers answer it. */
interface StartedApi {
  config: { redisUrl: string };
  close(): Promise<void>;
}

/** The API, a worker context on its config (not started), and a Redis client; filled in beforeAll. */
export interface ApiWithWorker<TApi> {
  readonly api: TApi;
  readonly worker: INestApplicationContext;
  readonly redis: Redis;
}

/**
 * For the calling describe block: the API (`startApi`), a worker context built from its config
 * (`workerModule`, as worker.ts builds it; a test starts its runner) and a Redis client on the same
 * server; all closed after the block. Reading a part before beforeAll ran throws.
 */
export function apiWithWorkerForSuite<TApi extends StartedApi>(
  startApi: () => Promise<TApi>,
  workerModule: (config: TApi['config']) => DynamicModule,
): ApiWithWorker<TApi> {
  const started = forSuite(
    'apiWithWorkerForSuite',
    async () => {
      const api = await startApi();
      const worker = await NestFactory.createApplicationContext(workerModule(api.config), { logger: false });
      return { api, worker, redis: new Redis(api.config.redisUrl) };
    },
    async (parts) => {
      await parts.worker.close();
      parts.redis.disconnect();
      await parts.api.close();
    },
  );
  return {
    get api() {
      return started().api;
    },
    get worker() {
      return started().worker;
    },
    get redis() {
      return started().redis;
    },
  };
}
