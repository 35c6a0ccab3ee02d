import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ConfigError, defaultDataDir, devSecret, EnvVar, loadConfig } from '@app/service-kit';
import { serviceConfigOf, ServiceEnvVar, type ServiceConfig } from '@app/service-kit';
import path from 'node:path';

const HTTP_URL = /^https?:\/\//;

/**
 * Every environment variable the platform reads, with its default (decisions.md "Operator contract") and
 * its meaning: `npm run docs:config` writes docs/configuration.md from these declarations.
 */
export class PlatformEnv {
  @ServiceEnvVar.nodeEnv('`AUTH_JWT_SECRET`, `CONSENT_INTEGRITY_SECRET`') NODE_ENV = 'development';
  @ServiceEnvVar.port('HTTP port') PLATFORM_PORT = 3000;
  @ServiceEnvVar.databaseUrl() PLATFORM_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/platform';
  @ServiceEnvVar.redisUrl() REDIS_URL = 'redis://127.0.0.1:6379';
  @ServiceEnvVar.queuePrefix() QUEUE_PREFIX = 'bull';
  @ServiceEnvVar.logLevel() LOG_LEVEL = 'info';
  @ServiceEnvVar.dataDir() DATA_DIR = defaultDataDir();
  @ServiceEnvVar.workerConcurrency() WORKER_CONCURRENCY = 4;
  @ServiceEnvVar.port("the platform worker's `/metrics`, `/healthz` and `/readyz` port (0: a free one, logged)")
  PLATFORM_WORKER_METRICS_PORT = 9464;
  @ServiceEnvVar.metricsToken() METRICS_TOKEN?: string;
  @ServiceEnvVar.trustProxy() TRUST_PROXY?: string;

  @EnvVar(
    'with `PLATFORM_BOOTSTRAP_ADMIN_PASSWORD`: create tenant `Default`, organization `default`, role `superadmin` and this user ' +
      'at start (idempotent)',
  )
  @IsOptional()
  @IsString()
  PLATFORM_BOOTSTRAP_ADMIN_EMAIL?: string;
  @EnvVar("the bootstrap user's password (goes with `PLATFORM_BOOTSTRAP_ADMIN_EMAIL`)")
  @IsOptional()
  @IsString()
  PLATFORM_BOOTSTRAP_ADMIN_PASSWORD?: string;

  @EnvVar('base of links in emails (`/reset-password`, `/setup-password`)') @Matches(HTTP_URL) PLATFORM_APP_URL = 'http://localhost:3000';
  @EnvVar('comma list: allowed `Origin` for reset / invites, and redirect targets', { default: 'origin of `PLATFORM_APP_URL`' })
  @IsOptional()
  @IsString()
  PLATFORM_ALLOWED_ORIGINS?: string;
  @EnvVar('mail-api base URL') @Matches(HTTP_URL) PLATFORM_MAIL_API_URL = 'http://127.0.0.1:3001';
  @EnvVar('`sk_` key; unset: account emails are written to the log') @IsOptional() @Matches(/^sk_/) PLATFORM_MAIL_API_KEY?: string;
  @EnvVar('sender of account emails') @IsString() PLATFORM_MAIL_FROM = 'no-reply@example.com';

  @EnvVar('HS256 key of access tokens (required in production)', { default: 'random, kept in `.data/secrets/`' })
  @IsOptional()
  @IsString()
  AUTH_JWT_SECRET?: string;
  @EnvVar('HMAC key of consent records (required in production)', { default: 'random, kept in `.data/secrets/`' })
  @IsOptional()
  @IsString()
  CONSENT_INTEGRITY_SECRET?: string;

  @EnvVar('attachment storage of the `local` driver', { default: '`<DATA_DIR>/attachments`' })
  @IsOptional()
  @IsString()
  ATTACHMENTS_ROOT?: string;
  @EnvVar('`local` (disk under `ATTACHMENTS_ROOT`) or `s3` (an S3-compatible bucket)') @IsIn(['local', 's3']) ATTACHMENTS_DRIVER = 'local';
  @EnvVar('S3 endpoint URL, e.g. `http://minio:9000`', { default: 'unset (AWS)' })
  @IsOptional()
  @Matches(HTTP_URL)
  ATTACHMENTS_S3_ENDPOINT?: string;
  @EnvVar('bucket of the `s3` driver (required with it)') @IsOptional() @IsString() ATTACHMENTS_S3_BUCKET?: string;
  @EnvVar('S3 region') @IsString() ATTACHMENTS_S3_REGION = 'us-east-1';
  @EnvVar('S3 access key id; with `ATTACHMENTS_S3_SECRET_KEY`, both or neither', { default: 'unset (SDK credential chain)' })
  @IsOptional()
  @IsString()
  ATTACHMENTS_S3_ACCESS_KEY?: string;
  @EnvVar('S3 secret key; with `ATTACHMENTS_S3_ACCESS_KEY`, both or neither', { default: 'unset (SDK credential chain)' })
  @IsOptional()
  @IsString()
  ATTACHMENTS_S3_SECRET_KEY?: string;
  @EnvVar('path-style URLs (`endpoint/bucket/key`), what MinIO and most S3-compatible stores need')
  @IsIn(['true', 'false', '1', '0'])
  ATTACHMENTS_S3_FORCE_PATH_STYLE = 'true';
  @EnvVar('AI pending action lifetime') @Type(() => Number) @IsInt() @Min(1) AI_PENDING_ACTION_TTL_SECONDS = 900;
  @EnvVar(
    'seconds a confirm holds a pending action (renewed while its tool runs); a lapsed claim is a crashed process’s: the ' +
      'worker makes the action `pending` again, or `failed` (`interrupted`) when its tool may have run',
  )
  @Type(() => Number)
  @IsInt()
  @Min(2)
  @Max(45)
  AI_PENDING_ACTION_LEASE_SECONDS = 20;
  @EnvVar(
    'comma list of URL prefixes (same origin, path by whole segments) that a base URL other than the deployment’s own (tenant ' +
      'settings, chat `baseUrl`) must match; unset: any http(s) URL, which never receives the deployment’s key',
  )
  @IsOptional()
  @IsString()
  AI_RUNTIME_BASEURL_ALLOWLIST?: string;
  @EnvVar(
    '`true`: with `NODE_ENV=production`, a base URL other than the deployment’s own may still reach private, loopback and ' +
      'link-local addresses (refused otherwise, checked when connecting)',
  )
  @IsIn(['true', 'false', '1', '0'])
  AI_BASEURL_ALLOW_PRIVATE = 'false';
  @EnvVar('tokens (input + output) one tenant may use per UTC day; past it chat and run-object answer 429 `budget_exceeded`')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  AI_TENANT_DAILY_TOKENS = 2_000_000;
  @EnvVar('tokens one user may use per UTC day (within the tenant’s); past it 429 `budget_exceeded`')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  AI_USER_DAILY_TOKENS = 200_000;
  @EnvVar('key of provider `openai`; unset: not configured (400 `provider_not_configured`)')
  @IsOptional()
  @IsString()
  AI_OPENAI_API_KEY?: string;
  @EnvVar('OpenAI-compatible Chat Completions base URL') @Matches(HTTP_URL) AI_OPENAI_BASE_URL = 'https://api.openai.com/v1';
  @EnvVar('key of provider `anthropic`') @IsOptional() @IsString() AI_ANTHROPIC_API_KEY?: string;
  @EnvVar('Anthropic Messages API base URL') @Matches(HTTP_URL) AI_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
  @EnvVar('provider used unless an agent, the tenant settings or a request choose otherwise') @IsString() AI_DEFAULT_PROVIDER = 'openai';
  @EnvVar('model used unless an agent, the tenant settings or a request choose otherwise') @IsString() AI_DEFAULT_MODEL = 'gpt-4o-mini';
  @EnvVar('comma list bounding every provider choice (settings, allowlists, chat)', { default: 'unset (no restriction)' })
  @IsOptional()
  @IsString()
  AI_ALLOWED_PROVIDERS?: string;
  @EnvVar('comma list bounding every model choice (settings, allowlists, chat)', { default: 'unset (no restriction)' })
  @IsOptional()
  @IsString()
  AI_ALLOWED_MODELS?: string;
}

/** The typed config the rest of the app reads (no `process.env` elsewhere). */
export interface PlatformConfig extends ServiceConfig {
  bootstrapAdmin: { email: string; password: string } | null;
  appUrl: string;
  allowedOrigins: string[];
  mailApi: { url: string; key: string | null; from: string };
  jwtSecret: string;
  consentIntegritySecret: string;
  attachmentsRoot: string;
  /** Where attachment bytes live (decisions.md "Attachments"): local disk under `attachmentsRoot`, or an S3-compatible bucket. */
  attachmentsStorage: AttachmentsStorageConfig;
  aiPendingActionTtlSeconds: number;
  /** `AI_PENDING_ACTION_LEASE_SECONDS`: a confirm's claim on an action, renewed while its tool runs. */
  aiPendingActionLeaseSeconds: number;
  aiBaseUrlAllowlist: string[];
  /** `AI_BASEURL_ALLOW_PRIVATE`: a tenant's or request's base URL may reach private addresses in production. */
  aiBaseUrlAllowPrivate: boolean;
  /** AI providers and defaults (decisions.md "Provider configuration"); keys never leave the server. */
  aiRuntime: AiRuntimeConfig;
}

export interface AiRuntimeConfig {
  /** Per provider id: its key (null: not configured) and the base URL its protocol is spoken at. */
  providers: Record<'openai' | 'anthropic', { apiKey: string | null; baseUrl: string }>;
  defaultProvider: string;
  defaultModel: string;
  /** `AI_ALLOWED_PROVIDERS` / `AI_ALLOWED_MODELS`; null: no restriction. */
  allowedProviders: string[] | null;
  allowedModels: string[] | null;
  /** `AI_TENANT_DAILY_TOKENS` / `AI_USER_DAILY_TOKENS`: tokens per UTC day, from the usage rows. */
  dailyTokenBudgets: { tenant: number; user: number };
}

export type AttachmentsStorageConfig =
  | { driver: 'local' }
  | {
      driver: 's3';
      /** Unset: AWS's own endpoint for the region. */
      endpoint: string | null;
      bucket: string;
      region: string;
      /** Unset: the SDK's default credential chain (environment, instance role). */
      credentials: { accessKeyId: string; secretAccessKey: string } | null;
      forcePathStyle: boolean;
    };

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
    ...serviceConfigOf(e, {
      port: e.PLATFORM_PORT,
      databaseUrl: e.PLATFORM_DATABASE_URL,
      workerMetricsPort: e.PLATFORM_WORKER_METRICS_PORT,
    }),
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
    attachmentsStorage: attachmentsStorageOf(e),
    aiPendingActionTtlSeconds: e.AI_PENDING_ACTION_TTL_SECONDS,
    aiPendingActionLeaseSeconds: e.AI_PENDING_ACTION_LEASE_SECONDS,
    aiBaseUrlAllowlist: list(e.AI_RUNTIME_BASEURL_ALLOWLIST),
    aiBaseUrlAllowPrivate: e.AI_BASEURL_ALLOW_PRIVATE === 'true' || e.AI_BASEURL_ALLOW_PRIVATE === '1',
    aiRuntime: {
      providers: {
        openai: { apiKey: e.AI_OPENAI_API_KEY || null, baseUrl: e.AI_OPENAI_BASE_URL.replace(/\/+$/, '') },
        anthropic: { apiKey: e.AI_ANTHROPIC_API_KEY || null, baseUrl: e.AI_ANTHROPIC_BASE_URL.replace(/\/+$/, '') },
      },
      defaultProvider: e.AI_DEFAULT_PROVIDER,
      defaultModel: e.AI_DEFAULT_MODEL,
      allowedProviders: e.AI_ALLOWED_PROVIDERS ? list(e.AI_ALLOWED_PROVIDERS) : null,
      allowedModels: e.AI_ALLOWED_MODELS ? list(e.AI_ALLOWED_MODELS) : null,
      dailyTokenBudgets: { tenant: e.AI_TENANT_DAILY_TOKENS, user: e.AI_USER_DAILY_TOKENS },
    },
  };
}

/** ATTACHMENTS_DRIVER and its ATTACHMENTS_S3_* settings; s3 needs a bucket, and the two keys go together. */
function attachmentsStorageOf(e: PlatformEnv): AttachmentsStorageConfig {
  if (e.ATTACHMENTS_DRIVER !== 's3') return { driver: 'local' };
  if (!e.ATTACHMENTS_S3_BUCKET) {
    throw new ConfigError('invalid configuration: ATTACHMENTS_S3_BUCKET is required when ATTACHMENTS_DRIVER=s3');
  }
  if (Boolean(e.ATTACHMENTS_S3_ACCESS_KEY) !== Boolean(e.ATTACHMENTS_S3_SECRET_KEY)) {
    throw new ConfigError('invalid configuration: ATTACHMENTS_S3_ACCESS_KEY and ATTACHMENTS_S3_SECRET_KEY go together');
  }
  return {
    driver: 's3',
    endpoint: e.ATTACHMENTS_S3_ENDPOINT ?? null,
    bucket: e.ATTACHMENTS_S3_BUCKET,
    region: e.ATTACHMENTS_S3_REGION,
    credentials:
      e.ATTACHMENTS_S3_ACCESS_KEY && e.ATTACHMENTS_S3_SECRET_KEY
        ? { accessKeyId: e.ATTACHMENTS_S3_ACCESS_KEY, secretAccessKey: e.ATTACHMENTS_S3_SECRET_KEY }
        : null,
    forcePathStyle: e.ATTACHMENTS_S3_FORCE_PATH_STYLE === 'true' || e.ATTACHMENTS_S3_FORCE_PATH_STYLE === '1',
  };
}
