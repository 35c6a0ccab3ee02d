import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { CreateSidebarVariantDto, RolePreferenceQueryDto, SIDEBAR_MANAGE_FEATURE, UpdateSidebarPreferencesDto } from './sidebar.dto.js';
import { SidebarPreferencesService } from './sidebar-preferences.service.js';
import { SidebarVariantsService } from './sidebar-variants.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth/sidebar')
export class SidebarController {
  constructor(
    private readonly preferences: SidebarPreferencesService,
    private readonly variants: SidebarVariantsService,
  ) {}

  @Get('preferences')
  @ApiQuery({ name: 'roleId', required: false })
  @ApiOperation({
    summary: 'Sidebar preferences of the caller (tenant + locale), or of a role with ?roleId=.',
    description:
      'The locale is the caller’s stored locale (default "en"). A role-scope read needs auth.sidebar.manage (403), ' +
      'a UUID (400) and a role of the caller’s tenant or a global role (404 otherwise, also for super administrators). ' +
      '`roles` lists the tenant’s and global roles with `hasPreference` for the locale, only when `canApplyToRoles`.',
  })
  get(@CurrentAuth() auth: AuthContext, @Query('roleId') roleId: unknown) {
    return this.preferences.get(auth, roleId);
  }

  @Put('preferences')
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
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateSidebarPreferencesDto) {
    return this.preferences.update(auth, body);
  }

  @Delete('preferences')
  @RequireFeatures(SIDEBAR_MANAGE_FEATURE)
  @ApiOperation({
    summary: 'Removes a role’s preferences for the caller’s tenant and locale. Idempotent.',
    description: 'Command `auth.sidebar.preferences.delete`, with `X-Undo-Token`: undo puts the row back as it was.',
  })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: RolePreferenceQueryDto) {
    return this.preferences.removeRolePreference(auth, query.roleId);
  }

  @Get('variants')
  @ApiOperation({ summary: 'The caller’s named sidebar variants for its tenant and locale, oldest first.' })
  listVariants(@CurrentAuth() auth: AuthContext) {
    return this.variants.list(auth);
  }

  @Post('variants')
  @HttpCode(200)
  @RequireFeatures(SIDEBAR_MANAGE_FEATURE)
  @ApiOperation({
    summary: 'Creates a sidebar variant.',
    description:
      'A blank or omitted name gets the lowest free of "My preferences", "My preferences 2", ...; an explicit name ' +
      'already used by the caller (tenant + locale) is 409 with code duplicate_name. isActive: true deactivates the ' +
      'caller’s other variants in the same transaction. Command `auth.sidebar.variants.create`, with `X-Undo-Token`: ' +
      'undo deletes the variant and re-activates the one it deactivated.',
  })
  createVariant(@CurrentAuth() auth: AuthContext, @Body() body: CreateSidebarVariantDto) {
    return this.variants.create(auth, body);
  }
}
