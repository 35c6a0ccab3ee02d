import { Module } from '@nestjs/common';
import { MailMetricsService } from './mail-metrics.service.js';
import { MetricsRepository } from './metrics.repository.js';

/** The mail gauges of `GET /metrics` (the endpoint itself is service-kit's MetricsModule). */
@Module({ providers: [MetricsRepository, MailMetricsService] })
export class MailMetricsModule {}
