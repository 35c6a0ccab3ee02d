import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';

/** `GET /healthz` and `GET /readyz`; needs a TypeORM DataSource and the QueueModule's Redis. */
@Module({ controllers: [HealthController] })
export class HealthModule {}
