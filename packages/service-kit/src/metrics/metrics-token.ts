import { createHash, timingSafeEqual } from 'node:crypto';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** `WWW-Authenticate` of a refused scrape (RFC 6750). */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';
export const METRICS_UNAUTHORIZED_MESSAGE = 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>';

/**
 * Whether a scrape may read `/metrics`: always when no `METRICS_TOKEN` is configured, else only with
 * `Authorization: Bearer <token>`. Both sides are hashed first, so the comparison takes the same time
 * whatever the presented length (no length oracle).
 */
export function metricsScrapeAllowed(authorization: string | string[] | undefined, token: string | null | undefined): boolean {
  if (!token) return true;
  if (typeof authorization !== 'string') return false;
  const presented = BEARER.exec(authorization)?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(createHash('sha256').update(presented).digest(), createHash('sha256').update(token).digest());
}
