import { Expose, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ConfigError, defaultDataDir, devSecret, loadConfig, parseTrustProxy, type TrustProxySetting } from '@app/service-kit';
import path from 'node:path';

const POSTGRES_URL = /^postgres(ql)?:\/\//;
const REDIS_URL = /^rediss?:\/\//;
const HTTP_URL = /^https?:\/\//;

/** Every environment variable the platform reads, with its default (decisions.md "Operator contract"). */
export class PlatformEnv {
  @Expose() @IsIn(['development', 'production', 'test']) NODE_ENV = 'development';
  @Expose() @Type(() => Number) @IsInt() @Min(0) @Max(65535) PLATFORM_PORT = 3000;
  @Expose() @Matches(POSTGRES_URL) PLATFORM_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/platform';
  @Expose() @Matches(REDIS_URL) REDIS_URL = 'redis://127.0.0.1:6379';
  @Expose() @IsString() QUEUE_PREFIX = 'bull';
  @Expose() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL = 'info';
  @Expose() @IsString() DATA_DIR = defaultDataDir();
  @Expose() @Type(() => Number) @IsInt() @Min(1) @Max(100) WORKER_CONCURRENCY = 4;
  /** Proxies allowed to set X-Forwarded-For: a hop count or a comma list of addresses/CIDRs; unset = none. */
  @Expose() @IsOptional() @IsString() TRUST_PROXY?: string;

  @Expose() @IsOptional() @IsString() PLATFORM_BOOTSTRAP_ADMIN_EMAIL?: string;
  @Expose() @IsOptional() @IsString() PLATFORM_BOOTSTRAP_ADMIN_PASSWORD?: string;

  @Expose() @Matches(HTTP_URL) PLATFORM_APP_URL = 'http://localhost:3000';
  @Expose() @IsOptional() @IsString() PLATFORM_ALLOWED_ORIGINS?: string;
  @Expose() @Matches(HTTP_URL) PLATFORM_MAIL_API_URL = 'http://127.0.0.1:3001';
  @Expose() @IsOptional() @Matches(/^sk_/) PLATFORM_MAIL_API_KEY?: string;
  @Expose() @IsString() PLATFORM_MAIL_FROM = 'no-reply@example.com';

  @Expose() @IsOptional() @IsString() AUTH_JWT_SECRET?: string;
  @Expose() @IsOptional() @IsString() CONSENT_INTEGRITY_SECRET?: string;

  @Expose() @IsOptional() @IsString() ATTACHMENTS_ROOT?: string;
  @Expose() @Type(() => Number) @IsInt() @Min(1) AI_PENDING_ACTION_TTL_SECONDS = 900;
  @Expose() @IsOptional() @IsString() AI_RUNTIME_BASEURL_ALLOWLIST?: string;
}

/** The typed config the rest of the app reads (no `process.env` elsewhere). */
export interface PlatformConfig {
  env: 'development' | 'production' | 'test';
  port: number;
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  dataDir: string;
  workerConcurrency: number;
  /** `TRUST_PROXY`: which peers may set the client address through X-Forwarded-For. */
  trustProxy: TrustProxySetting;
  bootstrapAdmin: { email: string; password: string } | null;
  appUrl: string;
  allowedOrigins: string[];
  mailApi: { url: string; key: string | null; from: string };
  jwtSecret: string;
  consentIntegritySecret: string;
  attachmentsRoot: string;
  aiPendingActionTtlSeconds: number;
  aiBaseUrlAllowlist: string[];
}

export const PLATFORM_CONFIG = Symbol('PLATFORM_CONFIG');

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function loadPlatformConfig(env: NodeJS.ProcessEnv = process.env): PlatformConfig {
  const e = loadConfig(PlatformEnv, env);
  const production = e.NODE_ENV === 'production';
  const secret = (name: 'AUTH_JWT_SECRET' | 'CONSENT_INTEGRITY_SECRET'): string => {
    const value = e[name];
    if (value) return value;
    if (production) throw new ConfigError(`invalid configuration: ${name} is required when NODE_ENV=production`);
    return devSecret(e.DATA_DIR, name.toLowerCase());
  };
  if (Boolean(e.PLATFORM_BOOTSTRAP_ADMIN_EMAIL) !== Boolean(e.PLATFORM_BOOTSTRAP_ADMIN_PASSWORD)) {
    throw new ConfigError('invalid configuration: PLATFORM_BOOTSTRAP_ADMIN_EMAIL and PLATFORM_BOOTSTRAP_ADMIN_PASSWORD go together');
  }
  return {
    env: e.NODE_ENV as PlatformConfig['env'],
    port: e.PLATFORM_PORT,
    databaseUrl: e.PLATFORM_DATABASE_URL,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    logLevel: e.LOG_LEVEL,
    dataDir: e.DATA_DIR,
    workerConcurrency: e.WORKER_CONCURRENCY,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    bootstrapAdmin:
      e.PLATFORM_BOOTSTRAP_ADMIN_EMAIL && e.PLATFORM_BOOTSTRAP_ADMIN_PASSWORD
        ? { email: e.PLATFORM_BOOTSTRAP_ADMIN_EMAIL.trim().toLowerCase(), password: e.PLATFORM_BOOTSTRAP_ADMIN_PASSWORD }
        : null,
    appUrl: e.PLATFORM_APP_URL,
    allowedOrigins: e.PLATFORM_ALLOWED_ORIGINS ? list(e.PLATFORM_ALLOWED_ORIGINS) : [new URL(e.PLATFORM_APP_URL).origin],
    mailApi: { url: e.PLATFORM_MAIL_API_URL, key: e.PLATFORM_MAIL_API_KEY ?? null, from: e.PLATFORM_MAIL_FROM },
    jwtSecret: secret('AUTH_JWT_SECRET'),
    consentIntegritySecret: secret('CONSENT_INTEGRITY_SECRET'),
    attachmentsRoot: e.ATTACHMENTS_ROOT ?? path.join(e.DATA_DIR, 'attachments'),
    aiPendingActionTtlSeconds: e.AI_PENDING_ACTION_TTL_SECONDS,
    aiBaseUrlAllowlist: list(e.AI_RUNTIME_BASEURL_ALLOWLIST),
  };
}
