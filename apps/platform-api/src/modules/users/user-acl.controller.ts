import { Body, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ApiErrors, AuthAdminController } from '../../core/http/admin-controller.decorators.js';
import { AclWriteResultDto, GRANT_BOUNDARY } from '../roles/role-acl.dto.js';
import { UpdateUserAclDto, UserAclDto, UserAclQuery } from './user-acl.dto.js';
import { UserAclService } from './user-acl.service.js';

@AuthAdminController('auth/users/acl')
export class UserAclController {
  constructor(private readonly userAcl: UserAclService) {}

  @Get()
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
  @ApiErrors({ 400: 'Missing or invalid userId.', 403: '', 404: 'user not found' })
  getUserAcl(@CurrentAuth() auth: AuthContext, @Query() query: UserAclQuery) {
    return this.userAcl.getUserAcl(auth, query.userId);
  }

  @Put()
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
  @ApiErrors({ 400: 'Invalid payload or organizations outside the user’s tenant.', 403: '', 404: 'user not found' })
  putUserAcl(@CurrentAuth() auth: AuthContext, @Body() body: UpdateUserAclDto) {
    return this.userAcl.putUserAcl(auth, body);
  }
}
