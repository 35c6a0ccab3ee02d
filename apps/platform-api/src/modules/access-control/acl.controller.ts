import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import {
  AclWriteResultDto,
  RoleAclDto,
  RoleAclQuery,
  UpdateRoleAclDto,
  UpdateUserAclDto,
  UserAclDto,
  UserAclQuery,
} from './access-control.dto.js';
import { AclService } from './acl.service.js';

const GRANT_BOUNDARY =
  'A caller who is not a super administrator cannot grant isSuperAdmin, `*`, a feature or wildcard it does not hold, ' +
  'or organizations outside its own restriction, and cannot read or change a super administrator’s ACL (403). ';

@ApiTags('auth')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@Controller('auth')
export class AclController {
  constructor(private readonly acl: AclService) {}

  @Get('roles/acl')
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
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing or invalid roleId or tenantId.' })
  @ApiForbiddenResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'Role (or tenant) not found in the caller’s scope.' })
  getRoleAcl(@CurrentAuth() auth: AuthContext, @Query() query: RoleAclQuery) {
    return this.acl.getRoleAcl(auth, query.roleId, query.tenantId);
  }

  @Put('roles/acl')
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
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid payload or organizations outside the tenant.' })
  @ApiForbiddenResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'Role (or tenant) not found in the caller’s scope.' })
  putRoleAcl(@CurrentAuth() auth: AuthContext, @Body() body: UpdateRoleAclDto) {
    return this.acl.putRoleAcl(auth, body);
  }

  @Get('users/acl')
  @RequireFeatures('auth.acl.manage')
  @ApiOperation({
    summary: 'Read a user’s custom ACL',
    description:
      'The custom ACL of the user in the user’s tenant. A user of another tenant, or (for a caller restricted to ' +
      'organizations) a user outside those organizations or in none, is 404 as if it did not exist, except for super ' +
      'administrators. Without one: `{isSuperAdmin: false, features: [], organizations: null, hasCustomAcl: false}` ' +
      '(the user’s role ACLs apply). ' +
      GRANT_BOUNDARY,
  })
  @ApiOkResponse({ type: UserAclDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing or invalid userId.' })
  @ApiForbiddenResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'user not found' })
  getUserAcl(@CurrentAuth() auth: AuthContext, @Query() query: UserAclQuery) {
    return this.acl.getUserAcl(auth, query.userId);
  }

  @Put('users/acl')
  @RequireFeatures('auth.acl.manage')
  @ApiOperation({
    summary: 'Update a user’s custom ACL',
    description:
      'A custom ACL replaces the user’s role ACLs. Omitted fields keep their stored values (omitting features never ' +
      'deletes the ACL); omitted organizations without a stored ACL are the caller’s own restriction (null only for ' +
      'an unrestricted caller). Values beyond the grant boundary are dropped (features), coerced to false ' +
      '(isSuperAdmin) or narrowed to the caller’s organizations (organizations: given ones, and kept stored ones, so ' +
      'a restricted caller never leaves an ACL wider than its own restriction) and the answer says `sanitized: true`. ' +
      'The user must be in the caller’s tenant and organizations (404 otherwise, as for GET); a target user who is a super ' +
      'administrator is 403 for anyone but a super administrator. An ACL left with no features and no super ' +
      'administrator flag is removed, and the user’s role ACLs apply again. Takes effect on the user’s next request. ' +
      'Recorded in the action log (command `auth.users.acl.update`, resource `auth.user_acl`); the response carries ' +
      '`X-Undo-Token`, whose undo restores the previous custom ACL (or its absence).',
  })
  @ApiOkResponse({ type: AclWriteResultDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid payload or organizations outside the user’s tenant.' })
  @ApiForbiddenResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'user not found' })
  putUserAcl(@CurrentAuth() auth: AuthContext, @Body() body: UpdateUserAclDto) {
    return this.acl.putUserAcl(auth, body);
  }
}
