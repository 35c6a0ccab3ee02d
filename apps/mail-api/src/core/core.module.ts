import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { jsonLoggingModule, QueueModule, PoolClientErrorListener } from '@app/service-kit';
import { SECRET_PATH_PREFIXES } from './http/secret-paths.js';
import { MAIL_CONFIG, type MailConfig } from '../config/mail-config.js';
import { mailDataSourceOptions } from './database/data-source-options.js';

/**
 * What both entries (API and worker) stand on: config, JSON logs, Postgres (a TypeORM DataSource that
 * repositories use through service-kit's `query` helpers), Redis and the queues.
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: MailConfig): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        jsonLoggingModule({ service: 'mail-api', level: config.logLevel, secretPathPrefixes: SECRET_PATH_PREFIXES }),
        TypeOrmModule.forRoot(mailDataSourceOptions(config.databaseUrl)),
        QueueModule.forRoot({ url: config.redisUrl, queuePrefix: config.queuePrefix }),
      ],
      providers: [{ provide: MAIL_CONFIG, useValue: config }, PoolClientErrorListener],
      exports: [MAIL_CONFIG],
    };
  }
}
