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
      '`{isSuperAdmin: false, features: [], organizations: null}`. ' + GRANT_BOUNDARY,
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
      'Replaces features, isSuperAdmin (omitted: false) and organizations (omitted or null: no restriction) of the role ' +
      'in `tenantId` (default the caller’s tenant). Organizations must belong to that tenant (400). ' + GRANT_BOUNDARY +
      'A request beyond the boundary is refused as a whole with 403, so `sanitized` is always false here. ' +
      'Takes effect on the next request of every holder of the role. Recorded in the action log (command ' +
      '`auth.roles.acl.update`, resource `auth.role`); the response carries `X-Undo-Token`, whose undo restores the ' +
      'role’s previous ACLs exactly.',
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
      'The custom ACL of the user in the user’s tenant (a user of another tenant is 404, except for super ' +
      'administrators). Without one: `{isSuperAdmin: false, features: [], organizations: null, hasCustomAcl: false}` ' +
      '(the user’s role ACLs apply). ' + GRANT_BOUNDARY,
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
      'deletes the ACL). Given values beyond the grant boundary are dropped (features), coerced to false ' +
      '(isSuperAdmin) or narrowed (organizations) and the answer says `sanitized: true`; a target user who is a super ' +
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
