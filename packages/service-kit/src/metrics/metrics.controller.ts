import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../http/public.decorator.js';
import { MetricsRegistry } from './metrics-registry.js';

/**
 * `GET /metrics`: the Prometheus text exposition, without authentication like the probes (keep it
 * off the public ingress: it names routes and queues). Left out of the OpenAPI document, which
 * describes the product API.
 */
@ApiExcludeController()
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metricsText(@Res() res: Response): Promise<void> {
    const body = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.send(body);
  }
}
