import { Controller, Get, Header, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '../errors/domain-error.js';
import { Public } from '../http/public.decorator.js';
import { MetricsRegistry } from './metrics-registry.js';
import { METRICS_CHALLENGE, METRICS_UNAUTHORIZED_MESSAGE, metricsScrapeAllowed } from './metrics-token.js';

/**
 * `GET /metrics`: the Prometheus text exposition. Without `METRICS_TOKEN` it is open like the probes
 * (keep it off the public ingress: it names routes and queues); with it, only
 * `Authorization: Bearer <token>` reads it (401 in the app's error shape otherwise). Left out of the
 * OpenAPI document, which describes the product API.
 */
@ApiExcludeController()
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metricsText(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!metricsScrapeAllowed(req.headers.authorization, this.metrics.options.token)) {
      throw new DomainError(ErrorCode.Unauthorized, METRICS_UNAUTHORIZED_MESSAGE, {
        status: 401,
        headers: { 'WWW-Authenticate': METRICS_CHALLENGE },
      });
    }
    const body = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.send(body);
  }
}
