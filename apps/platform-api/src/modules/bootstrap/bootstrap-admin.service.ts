import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { hashPassword } from '../auth/credentials.js';
import { OrganizationsRepository } from '../directory/organizations.repository.js';
import { TenantsRepository } from '../directory/tenants.repository.js';
import { RoleAclRepository } from '../roles/role-acl.repository.js';
import { RolesRepository } from '../roles/roles.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { BootstrapRepository } from './bootstrap.repository.js';

const DEFAULT_TENANT = 'Default';

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
    private readonly bootstrap: BootstrapRepository,
    private readonly tenants: TenantsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly roles: RolesRepository,
    private readonly roleAcls: RoleAclRepository,
    private readonly users: UsersRepository,
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
      await this.bootstrap.lock(tx);
      const existing = await this.users.findIdByEmail(tx, normalizedEmail);
      if (existing) return { created: false, userId: existing };

      const scope = systemScope(await this.findOrCreateDefaultTenant(tx));
      const organizationId = await this.organizations.upsertBySlug(tx, scope, { name: 'Default', slug: 'default' });
      const roleId = await this.roles.upsertByName(tx, scope, 'superadmin');
      await this.roleAcls.grantSuperAdmin(tx, scope, roleId);
      const userId = await this.users.insert(tx, scope, { organizationId, email: normalizedEmail, name: 'Administrator', passwordHash });
      await this.roles.addMemberships(tx, scope, { userId, roleIds: [roleId] });
      return { created: true, userId };
    });
  }

  private async findOrCreateDefaultTenant(tx: EntityManager): Promise<string> {
    return (await this.tenants.findIdByName(tx, DEFAULT_TENANT)) ?? this.tenants.create(tx, DEFAULT_TENANT);
  }
}
