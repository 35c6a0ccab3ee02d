import { Body, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ApiErrors, AuthAdminController } from '../../core/http/admin-controller.decorators.js';
import { CreatedIdDto, OkDto } from '../../core/http/common.dto.js';
import { CreateRoleDto, ListRolesQuery, RoleIdQuery, RoleListDto, UpdateRoleDto } from './roles.dto.js';
import { RolesService } from './roles.service.js';

@AuthAdminController('auth/roles')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @RequireFeatures('auth.roles.list')
  @ApiOperation({
    summary: 'List roles',
    description:
      'The caller’s tenant roles and the global roles, ordered by name; super administrators see the roles of every tenant ' +
      '(with tenantName). `search` is a case-insensitive substring of the name; `pageSize` default 50, at most 100. ' +
      '`usersCount` counts memberships of users that are not deleted, in the listed tenant (a super administrator ' +
      'without a tenantId filter: in every tenant).',
  })
  @ApiOkResponse({ type: RoleListDto })
  @ApiErrors({ 400: 'Invalid query parameters.', 403: 'Missing auth.roles.list.' })
  list(@CurrentAuth() auth: AuthContext, @Query() query: ListRolesQuery) {
    return this.roles.list(auth, query);
  }

  @Post()
  @RequireFeatures('auth.roles.manage')
  @ApiOperation({
    summary: 'Create a role',
    description:
      'A super administrator creates a global role (usable in every tenant) by omitting tenantId, or a role of any tenant. ' +
      'Anyone else creates roles of their own tenant only: an omitted tenantId means the caller’s tenant, another ' +
      'tenant is 403. A duplicate name (case-insensitive) in the same tenant, or among global roles, is 400 ' +
      '`role name already exists`.',
  })
  @ApiCreatedResponse({ type: CreatedIdDto })
  @ApiErrors({
    400: 'Invalid payload, unknown tenant or duplicate name.',
    403: 'Missing auth.roles.manage, or another tenant named by a non super administrator.',
  })
  create(@CurrentAuth() auth: AuthContext, @Body() body: CreateRoleDto) {
    return this.roles.create(auth, body);
  }

  @Put()
  @RequireFeatures('auth.roles.manage')
  @ApiOperation({
    summary: 'Rename a role',
    description:
      'Another tenant’s role is 404 `role not found`. Global roles, and roles whose ACL makes their holders super ' +
      'administrators, may be changed by super administrators only (403).',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiErrors({ 400: 'Invalid payload or duplicate name.', 403: '', 404: 'role not found' })
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateRoleDto) {
    return this.roles.update(auth, body);
  }

  @Delete()
  @HttpCode(200)
  @RequireFeatures('auth.roles.manage')
  @ApiOperation({
    summary: 'Delete a role',
    description:
      '400 `role has assigned users` while users (not deleted) hold it. Another tenant’s role is 404. Global and ' +
      'super-administrator roles may be deleted by super administrators only (403). The role’s ACLs go with it.',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiErrors({ 400: 'Missing or invalid id, or users remain assigned.', 403: '', 404: 'role not found' })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: RoleIdQuery) {
    return this.roles.remove(auth, query.id);
  }
}
