import { Module } from '@nestjs/common';
import { AclController } from './acl.controller.js';
import { AclService } from './acl.service.js';
import { AclsRepository } from './acls.repository.js';
import { RolesController } from './roles.controller.js';
import { RolesRepository } from './roles.repository.js';
import { RolesService } from './roles.service.js';

/** Roles, role ACLs and user ACLs (/auth/roles*, /auth/users/acl). */
@Module({
  controllers: [RolesController, AclController],
  providers: [RolesService, AclService, RolesRepository, AclsRepository],
  exports: [RolesRepository, AclsRepository],
})
export class AccessControlModule {}
