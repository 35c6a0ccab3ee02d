import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { hashPassword } from '../../src/modules/auth/credentials.js';
import type { PlatformTestApp } from './platform-test-app.js';

/** Direct inserts for test setup: fast, and independent of the endpoints under test. */
export class Factories {
  constructor(private readonly ds: DataSource) {}

  static of(t: PlatformTestApp): Factories {
    return new Factories(t.app.get(DataSource));
  }

  async tenant(name = `Tenant ${randomUUID().slice(0, 8)}`): Promise<{ id: string; organizationId: string; slug: string }> {
    const [tenant] = await this.ds.query('INSERT INTO tenants (name) VALUES ($1) RETURNING id', [name]);
    const slug = `org-${randomUUID().slice(0, 8)}`;
    const [org] = await this.ds.query('INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, $2, $3) RETURNING id', [
      tenant.id,
      `${name} Org`,
      slug,
    ]);
    return { id: tenant.id, organizationId: org.id, slug };
  }

  /** A role (tenant-scoped unless tenantId is null) with an ACL in `aclTenantId` (default: its tenant). */
  async role(
    tenantId: string | null,
    acl: { features?: string[]; isSuperAdmin?: boolean; organizations?: string[] | null } = {},
    options: { name?: string; aclTenantId?: string } = {},
  ): Promise<{ id: string; name: string }> {
    const name = options.name ?? `role-${randomUUID().slice(0, 8)}`;
    const [role] = await this.ds.query('INSERT INTO roles (tenant_id, name) VALUES ($1, $2) RETURNING id', [tenantId, name]);
    const aclTenant = options.aclTenantId ?? tenantId;
    if (aclTenant) {
      await this.ds.query(
        'INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations) VALUES ($1, $2, $3, $4, $5)',
        [
          aclTenant,
          role.id,
          acl.isSuperAdmin ?? false,
          acl.features ?? [],
          acl.organizations === undefined ? null : JSON.stringify(acl.organizations),
        ],
      );
    }
    return { id: role.id, name };
  }

  async user(
    tenant: { id: string; organizationId: string },
    options: { email?: string; password?: string | null; roleIds?: string[]; name?: string } = {},
  ): Promise<{ id: string; email: string; password: string }> {
    const email = options.email ?? `user-${randomUUID().slice(0, 8)}@example.com`;
    const password = options.password === undefined ? 'password-123' : options.password;
    const [user] = await this.ds.query(
      'INSERT INTO users (tenant_id, organization_id, email, name, password_hash) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [tenant.id, tenant.organizationId, email.toLowerCase(), options.name ?? null, password ? await hashPassword(password) : null],
    );
    for (const roleId of options.roleIds ?? []) {
      await this.ds.query('INSERT INTO user_roles (user_id, role_id, tenant_id) VALUES ($1, $2, $3)', [user.id, roleId, tenant.id]);
    }
    return { id: user.id, email: email.toLowerCase(), password: password ?? '' };
  }

  /** A tenant, a role with these features and a user holding it, logged in. */
  async loggedInUser(
    t: PlatformTestApp,
    acl: { features?: string[]; isSuperAdmin?: boolean; organizations?: string[] | null },
    tenant?: { id: string; organizationId: string },
  ) {
    const owner = tenant ?? (await this.tenant());
    const role = await this.role(owner.id, acl);
    const user = await this.user(owner, { roleIds: [role.id] });
    const token = await login(t, user.email, user.password);
    return { tenant: owner, role, user, token, auth: { Authorization: `Bearer ${token}` } };
  }
}

/** A unique client IP per call, so rate limits of one test never spill into another. */
export function testIp(): string {
  const n = Math.floor(Math.random() * 250) + 1;
  const m = Math.floor(Math.random() * 250) + 1;
  return `10.${n}.${m}.${Math.floor(Math.random() * 250) + 1}`;
}

export async function login(t: PlatformTestApp, email: string, password: string): Promise<string> {
  const res = await request(t.url).post('/auth/login').set('X-Forwarded-For', testIp()).type('form').send({ email, password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}
