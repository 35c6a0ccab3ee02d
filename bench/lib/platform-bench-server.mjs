#!/usr/bin/env node
// The platform API exactly as dist/main.js builds it (createPlatformHttpApp), plus one bench-only
// route: PUT /bench/direct-role-update, the role rename of PUT /auth/roles written directly, without
// the command bus (same auth guard, feature, DTO validation, scope checks, lock, rename, ACL cache
// invalidation and event). bench/audit-logs.mjs compares the two to price the action log.
import 'reflect-metadata';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Body, Controller, HttpCode, Module, Put } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError, ensureDatabaseExists, listen } from '@app/service-kit';
import { REPO_ROOT } from '../../scripts/lib/apps.mjs';

const dist = (p) => import(pathToFileURL(path.join(REPO_ROOT, 'apps/platform-api/dist', p)).href);
const { loadPlatformConfig } = await dist('config/platform-config.js');
const { createPlatformHttpApp } = await dist('http-setup.js');
const { CurrentAuth, RequireFeatures } = await dist('core/auth/auth.decorators.js');
const { assertMayManage } = await dist('core/auth/grant-boundary.js');
const { AccessCacheService } = await dist('core/auth/access-cache.service.js');
const { EventBus } = await dist('core/events/event-bus.service.js');
const { reachOf, scopeIn } = await dist('core/scope/tenant-reach.js');
const { RolesModule } = await dist('modules/roles/roles.module.js');
const { UpdateRoleDto } = await dist('modules/roles/roles.dto.js');
const { RolesRepository } = await dist('modules/roles/roles.repository.js');
const { RoleAclRepository } = await dist('modules/roles/role-acl.repository.js');

/**
 * RolesService.update's command body (the role locked in the caller's reach, checkManageable, rename)
 * and after-commit work, minus the bus.
 */
class DirectRoleUpdateController {
  constructor(dataSource, roles, roleAcls, cache, events) {
    Object.assign(this, { dataSource, roles, roleAcls, cache, events });
  }

  async update(auth, body) {
    const role = await this.dataSource.transaction(async (tx) => {
      // The lock the bus's "before" snapshot takes (FOR NO KEY UPDATE), on the role as the caller reaches it.
      const found = await this.roles.findInScope(tx, reachOf(auth), { id: body.id, lock: 'no key update' });
      if (!found) throw DomainError.notFound('role not found');
      if (!auth.isSuperAdmin) {
        if (found.tenantId === null) throw DomainError.forbidden('only a super administrator may change a global role');
        assertMayManage(auth, await this.roleAcls.find(tx, scopeIn(auth, found.tenantId), found.id));
      }
      if (body.name !== undefined && body.name !== found.name) await this.roles.rename(tx, { role: found, name: body.name });
      return found;
    });
    await this.cache.invalidateAcls();
    await this.events
      .emit({ id: 'auth.role.updated', tenantId: auth.tenantId, organizationId: auth.organizationId, payload: { id: role.id } })
      .catch(() => undefined);
    return { ok: true };
  }
}

// Decorators applied by hand (plain JavaScript), with the metadata TypeScript would emit.
Reflect.defineMetadata(
  'design:paramtypes',
  [DataSource, RolesRepository, RoleAclRepository, AccessCacheService, EventBus],
  DirectRoleUpdateController,
);
const proto = DirectRoleUpdateController.prototype;
Reflect.defineMetadata('design:paramtypes', [Object, UpdateRoleDto], proto, 'update');
CurrentAuth()(proto, 'update', 0);
Body()(proto, 'update', 1);
const descriptor = Object.getOwnPropertyDescriptor(proto, 'update');
for (const decorate of [Put('direct-role-update'), HttpCode(200), RequireFeatures('auth.roles.manage')])
  decorate(proto, 'update', descriptor);
Controller('bench')(DirectRoleUpdateController);

class BenchModule {}
Module({ imports: [RolesModule], controllers: [DirectRoleUpdateController] })(BenchModule);

const config = loadPlatformConfig();
await ensureDatabaseExists(config.databaseUrl);
const app = await createPlatformHttpApp(config, { extraModules: [BenchModule] });
const url = await listen(app, config.port, '127.0.0.1');
console.log(JSON.stringify({ bench: 'platform-api listening', url }));
