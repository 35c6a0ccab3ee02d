import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { hashPassword } from '../auth/credentials.js';

// Serialises concurrent bootstraps (several API replicas starting at once).
const BOOTSTRAP_LOCK_KEY = 727_101;

export interface BootstrapResult {
  created: boolean;
  userId: string;
}

/**
 * decisions.md "platform bootstrap": when no user has the configured email, create tenant `Default`,
 * organization `Default` (slug `default`), role `superadmin` with an `isSuperAdmin` ACL and the user.
 * Idempotent: a restart, or a second replica, creates nothing twice.
 */
@Injectable()
export class BootstrapAdminService implements OnApplicationBootstrap {
  private readonly logger = new Logger(BootstrapAdminService.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const admin = this.config.bootstrapAdmin;
    if (!admin) return;
    const result = await this.ensureAdmin(admin.email, admin.password);
    if (result.created) this.logger.log({ email: admin.email, userId: result.userId }, 'bootstrap admin created');
  }

  async ensureAdmin(email: string, password: string): Promise<BootstrapResult> {
    const normalizedEmail = email.trim().toLowerCase();
    const passwordHash = await hashPassword(password);
    return this.dataSource.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
      const existing: { id: string }[] = await tx.query('SELECT id FROM users WHERE lower(email) = $1 AND deleted_at IS NULL LIMIT 1', [
        normalizedEmail,
      ]);
      if (existing.length > 0) return { created: false, userId: existing[0].id };

      const tenantId = await this.findOrCreateDefaultTenant(tx.query.bind(tx));
      const [org] = await tx.query(
        `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Default', 'default')
         ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
        [tenantId],
      );
      const [role] = await tx.query(
        `INSERT INTO roles (tenant_id, name) VALUES ($1, 'superadmin')
         ON CONFLICT (COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), lower(name))
         DO UPDATE SET name = roles.name RETURNING id`,
        [tenantId],
      );
      await tx.query(
        `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features) VALUES ($1, $2, true, '{}')
         ON CONFLICT (tenant_id, role_id) DO UPDATE SET is_super_admin = true, updated_at = now()`,
        [tenantId, role.id],
      );
      const [user] = await tx.query(
        `INSERT INTO users (tenant_id, organization_id, email, name, password_hash)
         VALUES ($1, $2, $3, 'Administrator', $4) RETURNING id`,
        [tenantId, org.id, normalizedEmail, passwordHash],
      );
      await tx.query(`INSERT INTO user_roles (user_id, role_id, tenant_id) VALUES ($1, $2, $3)`, [user.id, role.id, tenantId]);
      return { created: true, userId: user.id as string };
    });
  }

  private async findOrCreateDefaultTenant(query: (sql: string, params?: unknown[]) => Promise<{ id: string }[]>) {
    const found = await query(`SELECT id FROM tenants WHERE name = 'Default' ORDER BY created_at LIMIT 1`);
    if (found.length > 0) return found[0].id;
    const [tenant] = await query(`INSERT INTO tenants (name) VALUES ('Default') RETURNING id`);
    return tenant.id;
  }
}
