import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadPlatformConfig } from '../src/config/platform-config.js';

describe('platform config', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-config-'));

  it('has the defaults of decisions.md', () => {
    const c = loadPlatformConfig({ DATA_DIR: dataDir });
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/platform');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.mailApi).toEqual({ url: 'http://127.0.0.1:3001', key: null, from: 'no-reply@example.com' });
    expect(c.appUrl).toBe('http://localhost:3000');
    expect(c.allowedOrigins).toEqual(['http://localhost:3000']);
    expect(c.attachmentsRoot).toBe(path.join(dataDir, 'attachments'));
    expect(c.aiPendingActionTtlSeconds).toBe(900);
    expect(c.bootstrapAdmin).toBeNull();
    expect(c.trustProxy).toBe(false);
  });

  it('TRUST_PROXY: a hop count or addresses/CIDRs, anything else refused', () => {
    expect(loadPlatformConfig({ DATA_DIR: dataDir, TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadPlatformConfig({ DATA_DIR: dataDir, TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(() => loadPlatformConfig({ DATA_DIR: dataDir, TRUST_PROXY: 'uniquelocal' })).toThrow(/TRUST_PROXY/);
  });

  it('keeps one random dev secret per install under the data dir', () => {
    const a = loadPlatformConfig({ DATA_DIR: dataDir });
    const b = loadPlatformConfig({ DATA_DIR: dataDir });
    expect(a.jwtSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(b.jwtSecret).toBe(a.jwtSecret);
    expect(a.consentIntegritySecret).not.toBe(a.jwtSecret);
  });

  it('requires the secrets in production', () => {
    expect(() => loadPlatformConfig({ DATA_DIR: dataDir, NODE_ENV: 'production' })).toThrow(/AUTH_JWT_SECRET is required/);
    expect(() =>
      loadPlatformConfig({ DATA_DIR: dataDir, NODE_ENV: 'production', AUTH_JWT_SECRET: 'x', CONSENT_INTEGRITY_SECRET: 'y' }),
    ).not.toThrow();
  });

  it('rejects invalid values with one line naming each', () => {
    expect(() => loadPlatformConfig({ DATA_DIR: dataDir, PLATFORM_PORT: 'abc', REDIS_URL: 'http://x' })).toThrow(
      /PLATFORM_PORT.*REDIS_URL|REDIS_URL.*PLATFORM_PORT/,
    );
    expect(() => loadPlatformConfig({ DATA_DIR: dataDir, PLATFORM_BOOTSTRAP_ADMIN_EMAIL: 'a@b.c' })).toThrow(/go together/);
  });
});
