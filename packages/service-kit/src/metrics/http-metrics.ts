import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MetricsRegistry } from './metrics-registry.js';
import { RouteLatencyHistogram } from './route-latency-histogram.js';

/** Express sets `route` (the matched pattern) and `baseUrl` (a mounted router's prefix). */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

/** Requests that matched no route (404s, scanners): one label value, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';
/** The status of a request whose client went away before the response was complete (nginx's convention). */
export const CLIENT_CLOSED_STATUS = '499';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The route pattern of a request (`/contacts/:id`), never its URL: label values must stay few. */
export function routeLabel(req: IncomingMessage): string {
  const { route, baseUrl } = req as RoutedRequest;
  const pattern = route?.path;
  if (typeof pattern !== 'string') return UNMATCHED_ROUTE;
  return baseUrl ? baseUrl + pattern : pattern;
}

/**
 * `http_request_duration_seconds{method, route, status_code}`, observed by `createHttpApp`'s request
 * envelope when the app has the MetricsModule: one `observe` when the response closes, labelled with
 * the matched route pattern.
 */
@Injectable()
export class HttpMetrics {
  private readonly duration: RouteLatencyHistogram;

  constructor(metrics: MetricsRegistry) {
    this.duration = new RouteLatencyHistogram(
      'http_request_duration_seconds',
      'HTTP request latency by method, route pattern and status code',
      BUCKETS,
      metrics.registry,
    );
  }

  /** Records a request whose response closed `seconds` after it arrived (sent, or abandoned by its client). */
  observe(req: IncomingMessage, res: ServerResponse, seconds: number): void {
    this.duration.observe(
      req.method ?? 'GET',
      routeLabel(req),
      res.writableFinished ? String(res.statusCode) : CLIENT_CLOSED_STATUS,
      seconds,
    );
  }

  /**
   * Observes the request when its response closes, for an app not built by `createHttpApp` (whose
   * request envelope calls `observe` from its own listener) and for bench/http-metrics.mjs.
   */
  track(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    res.once('close', () => this.observe(req, res, (performance.now() - started) / 1000));
  }
}
