import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadMailConfig } from '../src/config/mail-config.js';

const SK = `sk_${'a1'.repeat(24)}`;
const PK = `pk_${'b2'.repeat(24)}`;

describe('mail config', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mail-config-'));

  it('has the defaults of decisions.md', () => {
    expect(loadMailConfig({ DATA_DIR: dataDir })).toEqual({
      env: 'development',
      port: 3001,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/mail',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'bull',
      logLevel: 'info',
      dataDir,
      workerConcurrency: 4,
      workerMetricsPort: 9465,
      metricsToken: null,
      adminToken: null,
      adminWriteToken: null,
      trustProxy: false,
      bootstrapKeys: null,
      smtpUrl: null,
      outboxDir: path.join(dataDir, 'outbox'),
      dnsServers: [],
      ratePerSecond: 14,
      publicUrl: 'http://localhost:3001',
      rateLimitPerMinute: 1000,
      keyCacheTtlSeconds: 30,
      keyNegativeCacheTtlSeconds: 5,
      publicRateLimitPerMinute: 1000,
      publicRateLimitPerIpPerMinute: 120,
      sendConcurrency: 32,
      smtpPoolSize: 5,
      sendLockSeconds: 30,
      domainRecheckSeconds: 600,
      linkSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      tracking: true,
      machineWindowSeconds: 2,
      campaignSweepSeconds: 30,
      secretsKey: expect.any(Buffer),
      workflows: {
        webhookAllowPrivate: false,
        webhookTimeoutMs: 10_000,
        webhookRetryBaseMs: 1000,
        sweepSeconds: 30,
        concurrency: 16,
        maxRunsPerDay: 20,
      },
      deliverability: {
        softBounceDelaysMs: [60_000, 300_000, 1_800_000, 7_200_000],
        throttleBackoffMs: 1000,
        bounceDomain: null,
        inboundSmtpPort: 2526,
      },
    });
  });

  it('reads the deliverability settings and refuses malformed ones', () => {
    expect(
      loadMailConfig({
        DATA_DIR: dataDir,
        MAIL_SOFT_BOUNCE_DELAYS_MS: '100, 200',
        MAIL_THROTTLE_BACKOFF_MS: '50',
        MAIL_BOUNCE_DOMAIN: 'Bounces.Example.com',
        MAIL_INBOUND_SMTP_PORT: '0',
      }).deliverability,
    ).toEqual({ softBounceDelaysMs: [100, 200], throttleBackoffMs: 50, bounceDomain: 'bounces.example.com', inboundSmtpPort: 0 });
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_SOFT_BOUNCE_DELAYS_MS: '1m,5m' })).toThrow(/MAIL_SOFT_BOUNCE_DELAYS_MS/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_THROTTLE_BACKOFF_MS: '120000' })).toThrow(/MAIL_THROTTLE_BACKOFF_MS/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_BOUNCE_DOMAIN: 'not a domain' })).toThrow(/MAIL_BOUNCE_DOMAIN/);
  });

  it('reads the workflow settings, MAIL_WEBHOOK_ALLOW_PRIVATE as true or false only', () => {
    expect(
      loadMailConfig({
        DATA_DIR: dataDir,
        MAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
        MAIL_WORKFLOW_SWEEP_SECONDS: '5',
        MAIL_WORKFLOW_MAX_RUNS_PER_DAY: '3',
      }).workflows,
    ).toMatchObject({
      webhookAllowPrivate: true,
      sweepSeconds: 5,
      maxRunsPerDay: 3,
    });
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_WORKFLOW_MAX_RUNS_PER_DAY: '0' })).toThrow(/MAIL_WORKFLOW_MAX_RUNS_PER_DAY/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/MAIL_WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_WEBHOOK_TIMEOUT_MS: '0' })).toThrow(/MAIL_WEBHOOK_TIMEOUT_MS/);
  });

  it('keeps the development link secret under DATA_DIR, the same across loads', () => {
    expect(loadMailConfig({ DATA_DIR: dataDir }).linkSecret).toBe(loadMailConfig({ DATA_DIR: dataDir }).linkSecret);
  });

  it('requires MAIL_LINK_SECRET in production', () => {
    expect(() => loadMailConfig({ DATA_DIR: dataDir, NODE_ENV: 'production' })).toThrow(
      /MAIL_LINK_SECRET is required when NODE_ENV=production/,
    );
  });

  it('refuses a TRUST_PROXY that is neither a hop count nor addresses/CIDRs', () => {
    expect(() => loadMailConfig({ DATA_DIR: dataDir, TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
    expect(loadMailConfig({ DATA_DIR: dataDir, TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('DATA_DIR defaults to .data at the repository root', () => {
    expect(loadMailConfig({}).dataDir).toMatch(/\.data$/);
  });

  it('reads every variable', () => {
    const c = loadMailConfig({
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      MAIL_PORT: '4001',
      MAIL_BOOTSTRAP_SECRET_KEY: SK,
      MAIL_BOOTSTRAP_PUBLIC_KEY: PK,
      MAIL_SMTP_URL: 'smtps://user:pw@smtp.example.com:465',
      MAIL_OUTBOX_DIR: '/tmp/outbox',
      MAIL_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,10.0.0.2',
      MAIL_RATE_PER_SECOND: '50',
      MAIL_PUBLIC_URL: 'https://mail.example.com/',
      WORKER_CONCURRENCY: '8',
      MAIL_RATE_LIMIT_PER_MINUTE: '60',
      MAIL_KEY_CACHE_TTL_SECONDS: '0',
      MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS: '2',
      MAIL_PUBLIC_RATE_LIMIT_PER_MINUTE: '30',
      MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE: '10',
      MAIL_SEND_CONCURRENCY: '64',
      MAIL_SMTP_POOL_SIZE: '8',
      MAIL_SEND_LOCK_SECONDS: '5',
      MAIL_DOMAIN_RECHECK_SECONDS: '120',
      MAIL_LINK_SECRET: 'link-secret',
      MAIL_SECRETS_KEY: 'ab'.repeat(32),
      TRUST_PROXY: '10.0.0.0/8,fd00::/8',
    });
    expect(c).toMatchObject({
      env: 'production',
      port: 4001,
      bootstrapKeys: { secretKey: SK, publicKey: PK },
      smtpUrl: 'smtps://user:pw@smtp.example.com:465',
      outboxDir: '/tmp/outbox',
      dnsServers: ['127.0.0.1:5353', '[::1]:53', '10.0.0.2'],
      ratePerSecond: 50,
      publicUrl: 'https://mail.example.com',
      workerConcurrency: 8,
      trustProxy: ['10.0.0.0/8', 'fd00::/8'],
      rateLimitPerMinute: 60,
      keyCacheTtlSeconds: 0,
      keyNegativeCacheTtlSeconds: 2,
      publicRateLimitPerMinute: 30,
      publicRateLimitPerIpPerMinute: 10,
      sendConcurrency: 64,
      smtpPoolSize: 8,
      sendLockSeconds: 5,
      domainRecheckSeconds: 120,
      linkSecret: 'link-secret',
      secretsKey: Buffer.from('ab'.repeat(32), 'hex'),
    });
  });

  it('rejects malformed bootstrap keys, and one key without the other', () => {
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_BOOTSTRAP_SECRET_KEY: 'sk_short', MAIL_BOOTSTRAP_PUBLIC_KEY: PK })).toThrow(
      /MAIL_BOOTSTRAP_SECRET_KEY: must be sk_/,
    );
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_BOOTSTRAP_SECRET_KEY: PK, MAIL_BOOTSTRAP_PUBLIC_KEY: SK })).toThrow(
      /MAIL_BOOTSTRAP_SECRET_KEY.*MAIL_BOOTSTRAP_PUBLIC_KEY/,
    );
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_BOOTSTRAP_SECRET_KEY: SK })).toThrow(/go together/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_BOOTSTRAP_PUBLIC_KEY: PK })).toThrow(/go together/);
  });

  it('rejects invalid values with one line naming each', () => {
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_PORT: 'abc', MAIL_SMTP_URL: 'http://x' })).toThrow(
      /MAIL_PORT.*MAIL_SMTP_URL|MAIL_SMTP_URL.*MAIL_PORT/,
    );
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_RATE_PER_SECOND: '0' })).toThrow(/MAIL_RATE_PER_SECOND/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_RATE_PER_SECOND: '2.5' })).toThrow(/MAIL_RATE_PER_SECOND/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_DATABASE_URL: 'mysql://x/y' })).toThrow(/MAIL_DATABASE_URL/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_RATE_LIMIT_PER_MINUTE: '0' })).toThrow(/MAIL_RATE_LIMIT_PER_MINUTE/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_KEY_CACHE_TTL_SECONDS: '-1' })).toThrow(/MAIL_KEY_CACHE_TTL_SECONDS/);
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_PUBLIC_URL: 'localhost:3001' })).toThrow(/MAIL_PUBLIC_URL/);
  });

  it('rejects DNS servers that are not ip:port', () => {
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_DNS_SERVERS: 'dns.google:53' })).toThrow(
      /MAIL_DNS_SERVERS: not an ip:port: dns\.google:53/,
    );
    expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_DNS_SERVERS: '127.0.0.1:99999' })).toThrow(/MAIL_DNS_SERVERS/);
  });
});
