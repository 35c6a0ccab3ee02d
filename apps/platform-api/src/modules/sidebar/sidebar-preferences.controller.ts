import { Body, Controller, Delete, Get, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { RolePreferenceQueryDto, SIDEBAR_MANAGE_FEATURE, UpdateSidebarPreferencesDto } from './sidebar.dto.js';
import { SidebarPreferenceRemovedDto, SidebarPreferencesDto, SidebarPreferencesSavedDto } from './sidebar-responses.dto.js';
import { SidebarPreferencesService } from './sidebar-preferences.service.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';

@ApiTags('auth')
@ApiBearerAuth()
@ReturnsUndoTokens()
@Controller('auth/sidebar/preferences')
export class SidebarPreferencesController {
  constructor(private readonly preferences: SidebarPreferencesService) {}

  @Get()
  @ApiQuery({ name: 'roleId', required: false })
  @ApiOperation({
    summary: 'Sidebar preferences of the caller (tenant + locale), or of a role with ?roleId=.',
    description:
      'The locale is the caller’s stored locale (default "en"). A role-scope read needs auth.sidebar.manage (403), ' +
      'a UUID (400) and a role of the caller’s tenant or a global role (404 otherwise, also for super administrators). ' +
      '`roles` lists the tenant’s and global roles with `hasPreference` for the locale, only when `canApplyToRoles`.',
  })
  @ApiOkResponse({ type: SidebarPreferencesDto })
  get(@CurrentAuth() auth: AuthContext, @Query('roleId') roleId: unknown) {
    return this.preferences.get(auth, roleId);
  }

  @Put()
  @RequireFeatures(SIDEBAR_MANAGE_FEATURE)
  @ApiOperation({
    summary: 'Saves sidebar preferences (user scope by default, or a role).',
    description:
      'User scope: saves the caller’s preferences, also for every role in applyToRoles, and removes the preferences ' +
      'of clearRoleIds (a role in both is applied, not cleared). Role scope: saves the role’s preferences; non-empty ' +
      'applyToRoles or clearRoleIds are 400. A role outside the tenant (and not global) is 404. One transaction. ' +
      'Command `auth.sidebar.preferences.update`, with `X-Undo-Token`: one undo restores every row the save touched ' +
      '(the caller’s, and the applied and cleared roles’).',
  })
  @ApiOkResponse({ type: SidebarPreferencesSavedDto })
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateSidebarPreferencesDto) {
    return this.preferences.update(auth, body);
  }

  @Delete()
  @RequireFeatures(SIDEBAR_MANAGE_FEATURE)
  @ApiOperation({
    summary: 'Removes a role’s preferences for the caller’s tenant and locale. Idempotent.',
    description: 'Command `auth.sidebar.preferences.delete`, with `X-Undo-Token`: undo puts the row back as it was.',
  })
  @ApiOkResponse({ type: SidebarPreferenceRemovedDto })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: RolePreferenceQueryDto) {
    return this.preferences.removeRolePreference(auth, query.roleId);
  }
}
