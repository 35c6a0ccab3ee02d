import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { EnvVar } from './env-variable.js';
import { parseTrustProxy, type TrustProxySetting } from '../http/client-address.js';

/**
 * The environment variables every service reads the same way, each a whole declaration (its
 * `@EnvVar` meaning for docs/configuration.md and its validation), so the apps' schemas state only
 * the name and default: `@ServiceEnvVar.redisUrl() REDIS_URL = 'redis://127.0.0.1:6379'`.
 */

const POSTGRES_URL = /^postgres(ql)?:\/\//;
const REDIS_URL = /^rediss?:\/\//;

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  // Applied last to first, as stacked decorators are: `@EnvVar` runs last, as it did when stacked on top.
  return (target, key) => [...decorators].reverse().forEach((decorate) => decorate(target, key));
}

/** A credential that must be at least 24 characters when set. */
function longToken(meaning: string, unset: string): PropertyDecorator {
  return all(EnvVar(meaning, { default: unset }), IsOptional(), MinLength(24, { message: 'must be at least 24 characters' }));
}

export const ServiceEnvVar = {
  /** `NODE_ENV`: `production` requires the secrets named (Markdown). */
  nodeEnv: (secrets: string) =>
    all(EnvVar(`\`production\` requires the secrets (${secrets})`), IsIn(['development', 'production', 'test'])),
  /** A TCP port, 0 to 65535. */
  port: (meaning: string) =>
    all(
      EnvVar(meaning),
      Type(() => Number),
      IsInt(),
      Min(0),
      Max(65535),
    ),
  /** The service's Postgres URL; its database is created at start when missing. */
  databaseUrl: () => all(EnvVar('created at start when missing'), Matches(POSTGRES_URL)),
  redisUrl: () => all(EnvVar('queues, caches, rate limits, pub/sub'), Matches(REDIS_URL)),
  queuePrefix: () => all(EnvVar('Redis key prefix of queues, caches and limits'), IsString()),
  logLevel: () => all(EnvVar('pino level (`silent` .. `trace`)'), IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  dataDir: () => all(EnvVar('local state: dev secrets, outbox, attachments', { default: '`<repo>/.data` (else `./.data`)' }), IsString()),
  workerConcurrency: () =>
    all(
      EnvVar('jobs a worker process runs at once'),
      Type(() => Number),
      IsInt(),
      Min(1),
      Max(100),
    ),
  metricsToken: () =>
    longToken(
      '`GET /metrics` on the API and worker ports needs `Authorization: Bearer <token>` (401 otherwise); at least 24 characters',
      'unset (open: keep the metrics ports off the ingress)',
    ),
  /** A credential of at least 24 characters, with what it opens (`meaning`) and what unset means. */
  token: longToken,
  trustProxy: () =>
    all(
      EnvVar(
        'proxies allowed to set `X-Forwarded-For`: a hop count (`1` = one load balancer / ingress in front) or a comma list of ' +
          'proxy addresses and CIDR ranges (`10.0.0.0/8,fd00::/8`); unset, the client address is the TCP peer',
        { default: 'unset (trust no proxy)' },
      ),
      IsOptional(),
      IsString(),
    ),
};

/** The variables of `ServiceEnvVar` as a service's schema names them. */
export interface ServiceEnv {
  NODE_ENV: string;
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  LOG_LEVEL: string;
  DATA_DIR: string;
  WORKER_CONCURRENCY: number;
  METRICS_TOKEN?: string;
  TRUST_PROXY?: string;
}

/** The part of every service's typed config that `ServiceEnv` gives. */
export interface ServiceConfig {
  env: 'development' | 'production' | 'test';
  port: number;
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  dataDir: string;
  workerConcurrency: number;
  /** `<APP>_WORKER_METRICS_PORT`: where the worker serves /metrics and its probes. */
  workerMetricsPort: number;
  /** `METRICS_TOKEN`: the bearer token every scrape of `/metrics` needs; null: open. */
  metricsToken: string | null;
  /** `TRUST_PROXY`: which peers may set the client address through X-Forwarded-For. */
  trustProxy: TrustProxySetting;
}

/** The shared part of a service's config from its validated environment and its own port variables. */
export function serviceConfigOf(e: ServiceEnv, own: { port: number; databaseUrl: string; workerMetricsPort: number }): ServiceConfig {
  return {
    env: e.NODE_ENV as ServiceConfig['env'],
    port: own.port,
    databaseUrl: own.databaseUrl,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerMetricsPort: own.workerMetricsPort,
    metricsToken: e.METRICS_TOKEN ?? null,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
  };
}
