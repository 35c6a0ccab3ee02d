import { Module } from '@nestjs/common';
import { DirectoryModule } from '../directory/directory.module.js';
import { RoleAclController } from './role-acl.controller.js';
import { RoleAclRepository } from './role-acl.repository.js';
import { RoleAclService } from './role-acl.service.js';
import { RoleSnapshots } from './role-snapshot.js';
import { RolesController } from './roles.controller.js';
import { RolesRepository } from './roles.repository.js';
import { RolesService } from './roles.service.js';

/**
 * Roles and their ACLs (/auth/roles, /auth/roles/acl). Owns `roles`, `user_roles` (memberships) and
 * `role_acls`: their repositories are exported for user management and the bootstrap.
 */
@Module({
  imports: [DirectoryModule],
  controllers: [RolesController, RoleAclController],
  providers: [RolesService, RoleAclService, RolesRepository, RoleAclRepository, RoleSnapshots],
  exports: [RolesService, RolesRepository, RoleAclRepository],
})
export class RolesModule {}
