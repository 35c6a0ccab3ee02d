import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import argon2 from 'argon2';
import { DataSource } from 'typeorm';
import type { PlatformConfig } from '../src/config/platform-config.js';
import { createPlatformHttpApp } from '../src/http-setup.js';
import { BootstrapAdminService } from '../src/modules/bootstrap/bootstrap-admin.service.js';
import { createPlatformTestEnv, startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const ADMIN = { PLATFORM_BOOTSTRAP_ADMIN_EMAIL: 'Admin@Example.com', PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: 'correct horse 42' };

async function counts(ds: DataSource) {
  const [row] = await ds.query(`SELECT
      (SELECT count(*)::int FROM tenants) AS tenants,
      (SELECT count(*)::int FROM organizations) AS organizations,
      (SELECT count(*)::int FROM roles) AS roles,
      (SELECT count(*)::int FROM role_acls) AS "roleAcls",
      (SELECT count(*)::int FROM users) AS users,
      (SELECT count(*)::int FROM user_roles) AS "userRoles"`);
  return row;
}

/**
 * Boots one API instance per config at once, as replicas starting together (each runs the bootstrap),
 * then closes them. Passport keeps one global 'jwt' strategy per process, the last app's: after this,
 * authenticated requests to the file's own app would meet a closed one (this file sends none).
 */
async function withReplicas(configs: PlatformConfig[]): Promise<void> {
  const created = await Promise.allSettled(configs.map((config) => createPlatformHttpApp(config)));
  const apps = created.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const started = await Promise.allSettled(apps.map((app) => app.init()));
    for (const r of [...created, ...started]) if (r.status === 'rejected') throw r.reason;
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
}

describe('platform bootstrap', () => {
  let t: PlatformTestApp;
  let ds: DataSource;
  beforeAll(async () => {
    t = await startPlatformApp({ env: ADMIN });
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates tenant Default, organization default, a superadmin role and the admin at start', async () => {
    const [user] = await ds.query(`SELECT u.email, u.password_hash, t.name AS tenant, o.name AS org, o.slug
      FROM users u JOIN tenants t ON t.id = u.tenant_id JOIN organizations o ON o.id = u.organization_id`);
    expect(user).toMatchObject({ email: 'admin@example.com', tenant: 'Default', org: 'Default', slug: 'default' });
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    expect(await argon2.verify(user.password_hash, 'correct horse 42')).toBe(true);
    const [acl] = await ds.query(`SELECT r.name, a.is_super_admin FROM user_roles ur
      JOIN roles r ON r.id = ur.role_id JOIN role_acls a ON a.role_id = r.id AND a.tenant_id = ur.tenant_id`);
    expect(acl).toEqual({ name: 'superadmin', is_super_admin: true });
    expect(await counts(ds)).toEqual({ tenants: 1, organizations: 1, roles: 1, roleAcls: 1, users: 1, userRoles: 1 });
  });

  it('is idempotent: a restart, or replicas starting together, create nothing twice', async () => {
    // A restart as two replicas at once, configured with another password (and the email in other case).
    await withReplicas([
      { ...t.config, bootstrapAdmin: { email: 'admin@example.com', password: 'other password' } },
      { ...t.config, bootstrapAdmin: { email: 'ADMIN@example.com', password: 'other password' } },
    ]);
    expect(await counts(ds)).toEqual({ tenants: 1, organizations: 1, roles: 1, roleAcls: 1, users: 1, userRoles: 1 });
    const [user] = await ds.query(`SELECT password_hash FROM users`);
    expect(await argon2.verify(user.password_hash, 'correct horse 42')).toBe(true);
    // And the same calls racing inside one instance.
    const service = t.app.get(BootstrapAdminService);
    const results = await Promise.all([
      service.ensureAdmin('admin@example.com', 'other password'),
      service.ensureAdmin('ADMIN@example.com', 'other password'),
    ]);
    expect(results.map((r) => r.created)).toEqual([false, false]);
    expect(await counts(ds)).toEqual({ tenants: 1, organizations: 1, roles: 1, roleAcls: 1, users: 1, userRoles: 1 });
  });

  it('replicas starting together on an empty database create the admin once', async () => {
    const env = await createPlatformTestEnv(ADMIN);
    try {
      await withReplicas([env.config, env.config, env.config]);
      const check = new DataSource({ type: 'postgres', url: env.db.url });
      await check.initialize();
      try {
        expect(await counts(check)).toEqual({ tenants: 1, organizations: 1, roles: 1, roleAcls: 1, users: 1, userRoles: 1 });
      } finally {
        await check.destroy();
      }
    } finally {
      await env.cleanup();
    }
  });

  it('a second admin email joins the same Default tenant, organization and role', async () => {
    const service = t.app.get(BootstrapAdminService);
    const [a, b] = await Promise.all([
      service.ensureAdmin('second@example.com', 'pw-second-1'),
      service.ensureAdmin('second@example.com', 'pw-second-1'),
    ]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(await counts(ds)).toEqual({ tenants: 1, organizations: 1, roles: 1, roleAcls: 1, users: 2, userRoles: 2 });
  });
});
