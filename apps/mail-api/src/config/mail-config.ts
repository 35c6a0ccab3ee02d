import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { isIP } from 'node:net';
import path from 'node:path';
import { ConfigError, defaultDataDir, devSecret, EnvVar, loadConfig } from '@app/service-kit';
import { serviceConfigOf, ServiceEnvVar, type ServiceConfig } from '@app/service-kit';
import { PUBLIC_KEY_PATTERN, SECRET_KEY_PATTERN } from '../core/auth/project-keys.js';

const HTTP_URL = /^https?:\/\//;
const SMTP_URL = /^smtps?:\/\//;

/**
 * Every environment variable the mail service reads, with its default (decisions.md "Operator contract")
 * and its meaning: `npm run docs:config` writes docs/configuration.md from these declarations.
 */
export class MailEnv {
  @ServiceEnvVar.nodeEnv('`MAIL_LINK_SECRET`, `MAIL_SECRETS_KEY`') NODE_ENV = 'development';
  @ServiceEnvVar.port('HTTP port') MAIL_PORT = 3001;
  @ServiceEnvVar.databaseUrl() MAIL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/mail';
  @ServiceEnvVar.redisUrl() REDIS_URL = 'redis://127.0.0.1:6379';
  @ServiceEnvVar.queuePrefix() QUEUE_PREFIX = 'bull';
  @ServiceEnvVar.logLevel() LOG_LEVEL = 'info';
  @ServiceEnvVar.dataDir() DATA_DIR = defaultDataDir();
  @ServiceEnvVar.workerConcurrency() WORKER_CONCURRENCY = 4;
  @ServiceEnvVar.port("the mail worker's `/metrics`, `/healthz` and `/readyz` port (0: a free one, logged)") MAIL_WORKER_METRICS_PORT =
    9465;
  @ServiceEnvVar.metricsToken() METRICS_TOKEN?: string;
  @ServiceEnvVar.token(
    'opens the queue dashboard `/admin/queues` (Bearer, or the password of Basic authentication); at least 24 characters',
    'unset (no dashboard)',
  )
  MAIL_ADMIN_TOKEN?: string;
  @ServiceEnvVar.token(
    'a second token that also opens the queue dashboard and may retry, promote and clean jobs (with `MAIL_ADMIN_TOKEN` alone it is read-only); at least 24 characters, different from `MAIL_ADMIN_TOKEN`',
    'unset (read-only dashboard)',
  )
  MAIL_ADMIN_WRITE_TOKEN?: string;
  @ServiceEnvVar.trustProxy() TRUST_PROXY?: string;

  @EnvVar('with `MAIL_BOOTSTRAP_PUBLIC_KEY`: create project `Default` with exactly these keys at start (idempotent)')
  @IsOptional()
  @Matches(SECRET_KEY_PATTERN, { message: 'must be sk_ followed by 48 lowercase hex characters' })
  MAIL_BOOTSTRAP_SECRET_KEY?: string;
  @EnvVar("the bootstrap project's public key (goes with `MAIL_BOOTSTRAP_SECRET_KEY`)")
  @IsOptional()
  @Matches(PUBLIC_KEY_PATTERN, { message: 'must be pk_ followed by 48 lowercase hex characters' })
  MAIL_BOOTSTRAP_PUBLIC_KEY?: string;

  @EnvVar(
    "deliver through SMTP (`smtp://` or `smtps://`, credentials in the URL; query options are nodemailer's SMTP options, e.g. `?requireTLS=true`, `?tls.rejectUnauthorized=false`); unset: `.eml` files in `MAIL_OUTBOX_DIR`",
  )
  @IsOptional()
  @Matches(SMTP_URL)
  MAIL_SMTP_URL?: string;
  @EnvVar('where unsent messages are written', { default: '`<DATA_DIR>/outbox`' }) @IsOptional() @IsString() MAIL_OUTBOX_DIR?: string;
  @EnvVar('comma list of `ip:port` for verification lookups', { default: 'system resolvers' })
  @IsOptional()
  @IsString()
  MAIL_DNS_SERVERS?: string;
  @EnvVar('deployment-wide sending rate') @Type(() => Number) @IsInt() @Min(1) MAIL_RATE_PER_SECOND = 14;
  @EnvVar('base of unsubscribe and tracking links') @Matches(HTTP_URL) MAIL_PUBLIC_URL = 'http://localhost:3001';
  @EnvVar('API requests per project per minute, shared by all instances') @Type(() => Number) @IsInt() @Min(1) MAIL_RATE_LIMIT_PER_MINUTE =
    1000;
  @EnvVar('how long an instance trusts a looked-up API key (0: no cache); a disabled project or rotated key stops working within it')
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3600)
  MAIL_KEY_CACHE_TTL_SECONDS = 30;
  @EnvVar('how long an instance remembers a well-formed key of no project (0: not at all)')
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(300)
  MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS = 5;
  @EnvVar("public-key (`pk_`) requests per project per minute, a budget apart from the secret key's", {
    default: '`MAIL_RATE_LIMIT_PER_MINUTE`',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAIL_PUBLIC_RATE_LIMIT_PER_MINUTE?: number;
  @EnvVar('public-key requests per project per minute from one client address (IPv6: per /64)')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE = 120;
  @EnvVar('emails one worker process delivers at once') @Type(() => Number) @IsInt() @Min(1) @Max(1000) MAIL_SEND_CONCURRENCY = 32;
  @EnvVar('pooled SMTP connections per worker process') @Type(() => Number) @IsInt() @Min(1) @Max(100) MAIL_SMTP_POOL_SIZE = 5;
  @EnvVar('a worker that dies mid-send gives its email back after this long')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  MAIL_SEND_LOCK_SECONDS = 30;
  @EnvVar('how often the worker rechecks pending domains') @Type(() => Number) @IsInt() @Min(5) MAIL_DOMAIN_RECHECK_SECONDS = 600;
  @EnvVar('HMAC key of unsubscribe and tracking links (required in production)', { default: 'random, kept in `.data/secrets/`' })
  @IsOptional()
  @IsString()
  MAIL_LINK_SECRET?: string;
  @EnvVar('open pixel and click-redirect links in marketing emails; `false` sends them as written') @IsIn(['true', 'false']) MAIL_TRACKING =
    'true';
  @EnvVar(
    'opens and clicks sooner than this many seconds after the email was handed to SMTP are marked `machine` (scanners and proxies fetch at delivery); 0 turns the rule off',
  )
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3600)
  MAIL_MACHINE_WINDOW_S = 2;
  @EnvVar(
    'how often the worker re-creates lost campaign jobs from Postgres, completes finished campaigns and re-checks its recurring schedules',
  )
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  MAIL_CAMPAIGN_SWEEP_SECONDS = 30;
  @EnvVar(
    '32 bytes (64 hex characters or base64): AES-256-GCM key of the DKIM private keys and webhook secrets in the database ' +
      '(required in production; losing it makes them unreadable)',
    { default: 'random, kept in `.data/secrets/`' },
  )
  @IsOptional()
  @IsString()
  MAIL_SECRETS_KEY?: string;
  @EnvVar('`true` lets workflow webhooks reach private and loopback addresses in production (always allowed elsewhere)')
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  MAIL_WEBHOOK_ALLOW_PRIVATE = false;
  @EnvVar('time limit of one workflow webhook request, whole exchange')
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  MAIL_WEBHOOK_TIMEOUT_MS = 10_000;
  @EnvVar('first backoff of a failed webhook attempt, doubled for each of the 5 attempts')
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  MAIL_WEBHOOK_RETRY_BASE_MS = 1000;
  @EnvVar('how often the worker re-adds lost workflow step jobs and catches up missed starts and resumes')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  MAIL_WORKFLOW_SWEEP_SECONDS = 30;
  @EnvVar('workflow step jobs one worker process runs at once')
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  MAIL_WORKFLOW_CONCURRENCY = 16;
  @EnvVar(
    'executions of one workflow that may start per contact in 24 h, even with allowReentry; later triggers are skipped, logged and counted (mail_workflow_starts_skipped_total)',
  )
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  MAIL_WORKFLOW_MAX_RUNS_PER_DAY = 20;
  @EnvVar(
    'delays (ms, comma list) before each retry of an email the relay refused for now (SMTP 4xx other than throttling); after the last, the email is FAILED',
  )
  @Matches(/^\s*\d{1,9}\s*(,\s*\d{1,9}\s*){0,19}$/, { message: 'must be a comma list of 1 to 20 delays in milliseconds' })
  MAIL_SOFT_BOUNCE_DELAYS_MS = '60000,300000,1800000,7200000';
  @EnvVar(
    'first deployment-wide sending pause when the relay throttles (421, 454, "rate exceeded"); doubled while throttling repeats, at most 60 s',
  )
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  MAIL_THROTTLE_BACKOFF_MS = 1000;
  @EnvVar(
    'domain of the VERP envelope sender `bounces+<token>@<domain>` (its MX must point at the inbound listener); set, the worker listens for bounce and complaint reports',
    { default: 'unset (envelope sender = from address, no listener)' },
  )
  @IsOptional()
  @Matches(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i, {
    message: 'must be a domain name',
  })
  MAIL_BOUNCE_DOMAIN?: string;
  @EnvVar("the mail worker's inbound SMTP port for bounce and complaint reports (with `MAIL_BOUNCE_DOMAIN`; 0: a free one, logged)")
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MAIL_INBOUND_SMTP_PORT = 2526;
}

/** The typed config the rest of the app reads (no `process.env` elsewhere). */
export interface MailConfig extends ServiceConfig {
  /** `MAIL_ADMIN_TOKEN`: the queue dashboard's credential; null: no dashboard. */
  adminToken: string | null;
  /** `MAIL_ADMIN_WRITE_TOKEN`: opens the dashboard with its writes (retry, promote, clean); null: read-only. */
  adminWriteToken: string | null;
  /** The `Default` project's keys, created at start when no project has this secret key. */
  bootstrapKeys: { secretKey: string; publicKey: string } | null;
  /** SMTP relay; null means "write `.eml` files into `outboxDir`". */
  smtpUrl: string | null;
  outboxDir: string;
  /** Resolvers for /v1/verify and domain checks, as `ip:port` (Node's `setServers` format); empty = the system's. */
  dnsServers: string[];
  /** Deployment-wide sending rate (emails per second), whatever the number of workers. */
  ratePerSecond: number;
  /** Base of links in emails (unsubscribe), without a trailing slash. */
  publicUrl: string;
  /** API requests per minute per project, counted across all instances (Redis). */
  rateLimitPerMinute: number;
  /** How long an API key's project is cached in process; 0 = look it up on every request. */
  keyCacheTtlSeconds: number;
  /** How long a well-formed key of no project is remembered as unknown; 0 = not remembered. */
  keyNegativeCacheTtlSeconds: number;
  /** Public-key (`pk_`) requests per minute per project: a budget of their own, apart from the secret key's. */
  publicRateLimitPerMinute: number;
  /** Public-key requests per minute per project from one client address (IPv6: per /64). */
  publicRateLimitPerIpPerMinute: number;
  /** Emails one worker process delivers at once (the email queue's concurrency). */
  sendConcurrency: number;
  /** Pooled SMTP connections per worker process. */
  smtpPoolSize: number;
  /** BullMQ lock of an email job: a worker that dies mid-job gives it back after this long. */
  sendLockSeconds: number;
  /** How often the worker rechecks the DNS of pending domains. */
  domainRecheckSeconds: number;
  /** HMAC key of unsubscribe and tracking links (required in production; a per-install dev secret otherwise). */
  linkSecret: string;
  /** Open pixel and click-redirect links in marketing emails (`MAIL_TRACKING`, default true). */
  tracking: boolean;
  /** `MAIL_MACHINE_WINDOW_S`: opens and clicks sooner than this after the hand-off to SMTP are a machine's. */
  machineWindowSeconds: number;
  /**
   * How often the worker sweeps campaigns (re-creates dispatch, batch and delivery jobs missing from
   * Redis, completes finished campaigns) and re-asserts its recurring job schedules.
   */
  campaignSweepSeconds: number;
  /** AES-256-GCM key (32 bytes) of secrets kept in the database (DKIM private keys): required in production. */
  secretsKey: Buffer;
  /** Workflows: webhook targets, timeouts and retries, the sweep's interval and the step queue's concurrency. */
  workflows: {
    /** Private and loopback webhook targets are refused when `env` is production, unless this is true. */
    webhookAllowPrivate: boolean;
    webhookTimeoutMs: number;
    /** First backoff of a failed webhook attempt, doubled for each further one (5 attempts). */
    webhookRetryBaseMs: number;
    /** How often the worker rebuilds missing step jobs from Postgres. */
    sweepSeconds: number;
    /** Step jobs one worker process runs at once (webhook steps wait on the network). */
    concurrency: number;
    /**
     * Executions of one workflow that start per contact in any 24 h, `allowReentry` or not: a workflow
     * whose trigger its own steps keep causing (mail to a bouncing address, two workflows answering each
     * other's `email.sent`) stops there. Later triggers are skipped, logged and counted.
     */
    maxRunsPerDay: number;
  };
  /** The deliverability loop (decisions.md "Deliverability"). */
  deliverability: {
    /** `MAIL_SOFT_BOUNCE_DELAYS_MS`: the wait before each retry of a temporary (4xx) refusal; then FAILED. */
    softBounceDelaysMs: number[];
    /** `MAIL_THROTTLE_BACKOFF_MS`: the first deployment-wide pause on relay throttling (doubling, at most 60 s). */
    throttleBackoffMs: number;
    /** `MAIL_BOUNCE_DOMAIN`: VERP envelope senders and the inbound report listener; null: neither. */
    bounceDomain: string | null;
    /** `MAIL_INBOUND_SMTP_PORT`: where the worker listens for reports (0: a free port). */
    inboundSmtpPort: number;
  };
}

export const MAIL_CONFIG = Symbol('MAIL_CONFIG');

/** `1.2.3.4`, `1.2.3.4:53`, `[::1]:53` or a bare IPv6 address; anything else is a config error. */
function parseDnsServer(entry: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const plain = /^([^:]+)(?::(\d{1,5}))?$/.exec(entry);
  const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : plain ? [plain[1], plain[2]] : [entry, undefined];
  if (!isIP(host)) return null;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return null;
  return entry;
}

/** 32 bytes, written as 64 hex characters or in base64. */
function parseSecretsKey(value: string): Buffer {
  const text = value.trim();
  const key = /^[0-9a-f]{64}$/i.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/]{43}=?$/.test(text)
      ? Buffer.from(text, 'base64')
      : null;
  if (key?.length !== 32) {
    throw new ConfigError('invalid configuration: MAIL_SECRETS_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  return key;
}

function parseDnsServers(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const invalid = entries.filter((entry) => parseDnsServer(entry) === null);
  if (invalid.length > 0) {
    throw new ConfigError(`invalid configuration: MAIL_DNS_SERVERS: not an ip:port: ${invalid.join(', ')}`);
  }
  return entries;
}

export function loadMailConfig(env: NodeJS.ProcessEnv = process.env): MailConfig {
  const e = loadConfig(MailEnv, env);
  if (!e.MAIL_LINK_SECRET && e.NODE_ENV === 'production') {
    throw new ConfigError('invalid configuration: MAIL_LINK_SECRET is required when NODE_ENV=production');
  }
  if (!e.MAIL_SECRETS_KEY && e.NODE_ENV === 'production') {
    throw new ConfigError('invalid configuration: MAIL_SECRETS_KEY is required when NODE_ENV=production');
  }
  if (Boolean(e.MAIL_BOOTSTRAP_SECRET_KEY) !== Boolean(e.MAIL_BOOTSTRAP_PUBLIC_KEY)) {
    throw new ConfigError('invalid configuration: MAIL_BOOTSTRAP_SECRET_KEY and MAIL_BOOTSTRAP_PUBLIC_KEY go together');
  }
  if (e.MAIL_ADMIN_WRITE_TOKEN && e.MAIL_ADMIN_WRITE_TOKEN === e.MAIL_ADMIN_TOKEN) {
    throw new ConfigError('invalid configuration: MAIL_ADMIN_WRITE_TOKEN must differ from MAIL_ADMIN_TOKEN');
  }
  return {
    ...serviceConfigOf(e, { port: e.MAIL_PORT, databaseUrl: e.MAIL_DATABASE_URL, workerMetricsPort: e.MAIL_WORKER_METRICS_PORT }),
    adminToken: e.MAIL_ADMIN_TOKEN ?? null,
    adminWriteToken: e.MAIL_ADMIN_WRITE_TOKEN ?? null,
    bootstrapKeys:
      e.MAIL_BOOTSTRAP_SECRET_KEY && e.MAIL_BOOTSTRAP_PUBLIC_KEY
        ? { secretKey: e.MAIL_BOOTSTRAP_SECRET_KEY, publicKey: e.MAIL_BOOTSTRAP_PUBLIC_KEY }
        : null,
    smtpUrl: e.MAIL_SMTP_URL ?? null,
    outboxDir: e.MAIL_OUTBOX_DIR ?? path.join(e.DATA_DIR, 'outbox'),
    dnsServers: parseDnsServers(e.MAIL_DNS_SERVERS),
    ratePerSecond: e.MAIL_RATE_PER_SECOND,
    publicUrl: e.MAIL_PUBLIC_URL.replace(/\/+$/, ''),
    rateLimitPerMinute: e.MAIL_RATE_LIMIT_PER_MINUTE,
    keyCacheTtlSeconds: e.MAIL_KEY_CACHE_TTL_SECONDS,
    keyNegativeCacheTtlSeconds: e.MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS,
    publicRateLimitPerMinute: e.MAIL_PUBLIC_RATE_LIMIT_PER_MINUTE ?? e.MAIL_RATE_LIMIT_PER_MINUTE,
    publicRateLimitPerIpPerMinute: e.MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE,
    sendConcurrency: e.MAIL_SEND_CONCURRENCY,
    smtpPoolSize: e.MAIL_SMTP_POOL_SIZE,
    sendLockSeconds: e.MAIL_SEND_LOCK_SECONDS,
    domainRecheckSeconds: e.MAIL_DOMAIN_RECHECK_SECONDS,
    linkSecret: e.MAIL_LINK_SECRET ?? devSecret(e.DATA_DIR, 'mail_link_secret'),
    tracking: e.MAIL_TRACKING === 'true',
    machineWindowSeconds: e.MAIL_MACHINE_WINDOW_S,
    campaignSweepSeconds: e.MAIL_CAMPAIGN_SWEEP_SECONDS,
    secretsKey: parseSecretsKey(e.MAIL_SECRETS_KEY ?? devSecret(e.DATA_DIR, 'mail_secrets_key')),
    workflows: {
      webhookAllowPrivate: e.MAIL_WEBHOOK_ALLOW_PRIVATE,
      webhookTimeoutMs: e.MAIL_WEBHOOK_TIMEOUT_MS,
      webhookRetryBaseMs: e.MAIL_WEBHOOK_RETRY_BASE_MS,
      sweepSeconds: e.MAIL_WORKFLOW_SWEEP_SECONDS,
      concurrency: e.MAIL_WORKFLOW_CONCURRENCY,
      maxRunsPerDay: e.MAIL_WORKFLOW_MAX_RUNS_PER_DAY,
    },
    deliverability: {
      softBounceDelaysMs: e.MAIL_SOFT_BOUNCE_DELAYS_MS.split(',').map((d) => Number(d.trim())),
      throttleBackoffMs: e.MAIL_THROTTLE_BACKOFF_MS,
      bounceDomain: e.MAIL_BOUNCE_DOMAIN?.toLowerCase() ?? null,
      inboundSmtpPort: e.MAIL_INBOUND_SMTP_PORT,
    },
  };
}
