import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { performance } from 'node:perf_hooks';

/** What the machine rules need of a pixel or click request (machine-detection.ts). */
export interface EngagementRequestInfo {
  /** A HEAD request (Express answers HEAD with the GET route): scanners probe links that way. */
  head: boolean;
  userAgent: string | null;
  /** performance.now() when the handler got the request. */
  receivedAt: number;
}

/**
 * The request's method and User-Agent for the engagement endpoints, so the controller stays free of
 * Express objects. A custom decorator, not `@Headers('user-agent')`, which the OpenAPI document would
 * list as a header parameter.
 */
export const EngagementRequest = createParamDecorator((_data: unknown, ctx: ExecutionContext): EngagementRequestInfo => {
  const req = ctx.switchToHttp().getRequest<{ method: string; headers: Record<string, string | string[] | undefined> }>();
  const userAgent = req.headers['user-agent'];
  return {
    head: req.method === 'HEAD',
    userAgent: typeof userAgent === 'string' ? userAgent : null,
    receivedAt: performance.now(),
  };
});
