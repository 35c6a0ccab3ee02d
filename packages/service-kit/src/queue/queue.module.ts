import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { QueueService } from './queue.service.js';
import { createCommandClient, REDIS, REDIS_SETTINGS, type RedisSettings } from './redis.js';
import { WorkerRunner } from './worker-runner.service.js';

class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

/** Redis for commands (`REDIS`), queue producers (`QueueService`) and the worker runner. */
@Global()
@Module({})
export class QueueModule {
  static forRoot(settings: RedisSettings): DynamicModule {
    return {
      module: QueueModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: REDIS_SETTINGS, useValue: settings },
        {
          provide: REDIS,
          useFactory: () => {
            const client = createCommandClient(settings.url);
            client.on('error', () => undefined); // readiness reports it; avoid unhandled error events
            return client;
          },
        },
        RedisLifecycle,
        QueueService,
        WorkerRunner,
      ],
      exports: [REDIS, REDIS_SETTINGS, QueueService, WorkerRunner],
    };
  }
}
