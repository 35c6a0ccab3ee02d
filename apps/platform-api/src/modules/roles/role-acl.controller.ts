import { Body, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ApiErrors, AuthAdminController } from '../../core/http/admin-controller.decorators.js';
import { AclWriteResultDto, GRANT_BOUNDARY, RoleAclDto, RoleAclQuery, UpdateRoleAclDto } from './role-acl.dto.js';
import { RoleAclService } from './role-acl.service.js';

/** Role not found in the caller's scope, as both routes answer it. */
const ROLE_NOT_FOUND = 'Role (or tenant) not found in the caller’s scope.';

@AuthAdminController('auth/roles/acl')
export class RoleAclController {
  constructor(private readonly roleAcl: RoleAclService) {}

  @Get()
  @RequireFeatures('auth.acl.manage')
  @ApiOperation({
    summary: 'Read a role’s ACL in a tenant',
    description:
      'The ACL of the role (the caller’s tenant role, or a global role) in `tenantId` (default: the caller’s tenant; ' +
      'only super administrators may name another, 404 otherwise). A role without an ACL in that tenant answers ' +
      '`{isSuperAdmin: false, features: [], organizations: null}`. ' +
      GRANT_BOUNDARY,
  })
  @ApiOkResponse({ type: RoleAclDto })
  @ApiErrors({ 400: 'Missing or invalid roleId or tenantId.', 403: '', 404: ROLE_NOT_FOUND })
  getRoleAcl(@CurrentAuth() auth: AuthContext, @Query() query: RoleAclQuery) {
    return this.roleAcl.getRoleAcl(auth, query);
  }

  @Put()
  @RequireFeatures('auth.acl.manage')
  @ApiOperation({
    summary: 'Replace a role’s ACL in a tenant',
    description:
      'Replaces features, isSuperAdmin (omitted: false) and organizations of the role in `tenantId` (default the ' +
      'caller’s tenant). Organizations: null is no restriction; omitted is the caller’s own restriction (no restriction ' +
      'for an unrestricted caller), so a caller restricted to organizations never lifts it by omission, and its null ' +
      'or any organization outside its restriction is 403. Organizations must belong to that tenant (400). ' +
      GRANT_BOUNDARY +
      'A request beyond the boundary is refused as a whole with 403, so `sanitized` is always false here. ' +
      'Takes effect on the next request of every holder of the role. Recorded in the action log (command ' +
      '`auth.roles.acl.update`, resource `auth.role`); the response carries `X-Undo-Token`, whose undo restores the ' +
      'role’s previous ACL exactly. The entry’s snapshots hold the role with its ACL and members in that tenant only ' +
      '(a global role’s other tenants are not recorded, nor touched by the undo).',
  })
  @ApiOkResponse({ type: AclWriteResultDto })
  @ApiErrors({ 400: 'Invalid payload or organizations outside the tenant.', 403: '', 404: ROLE_NOT_FOUND })
  putRoleAcl(@CurrentAuth() auth: AuthContext, @Body() body: UpdateRoleAclDto) {
    return this.roleAcl.putRoleAcl(auth, body);
  }
}
