import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { jsonLoggingModule, QueueModule, PoolClientErrorListener } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../config/platform-config.js';
import { platformDataSourceOptions } from './database/data-source-options.js';

/** What both entries (API and worker) stand on: config, JSON logs, Postgres, Redis and the queues. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        jsonLoggingModule({ service: 'platform-api', level: config.logLevel }),
        TypeOrmModule.forRoot(platformDataSourceOptions(config.databaseUrl)),
        QueueModule.forRoot({ url: config.redisUrl, queuePrefix: config.queuePrefix }),
      ],
      providers: [{ provide: PLATFORM_CONFIG, useValue: config }, PoolClientErrorListener],
      exports: [PLATFORM_CONFIG],
    };
  }
}
