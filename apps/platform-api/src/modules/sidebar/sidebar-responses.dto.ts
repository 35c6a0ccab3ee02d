import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** 2xx bodies of the sidebar routes (platform-api.md "Sidebar ..."), for the OpenAPI document. */

const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** Always answered normalised (sidebar-settings.ts): every field present, version 2. */
export class SidebarSettingsDto {
  @ApiProperty({ type: 'integer', example: 2 }) version: number;
  @ApiProperty({ type: [String] }) groupOrder: string[];
  @ApiProperty({ ...STRING_MAP, description: 'Group key to label.' }) groupLabels: Record<string, string>;
  @ApiProperty({ ...STRING_MAP, description: 'Item key to label.' }) itemLabels: Record<string, string>;
  @ApiProperty({ type: [String] }) hiddenItems: string[];
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: 'Group key to item keys.',
  })
  itemOrder: Record<string, string[]>;
}

export class SidebarRoleEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The role has preferences for this tenant and locale.' }) hasPreference: boolean;
}

export class SidebarScopeAnswerDto {
  @ApiProperty({ enum: ['user', 'role'] }) type: 'user' | 'role';
  @ApiPropertyOptional({ format: 'uuid', description: 'Role scope only.' }) roleId?: string;
}

export class SidebarPreferencesDto {
  @ApiProperty({ example: 'en' }) locale: string;
  @ApiProperty({ type: SidebarSettingsDto, description: 'Empty settings when none are stored.' }) settings: SidebarSettingsDto;
  @ApiProperty({ description: 'The caller holds auth.sidebar.manage.' }) canApplyToRoles: boolean;
  @ApiProperty({ type: [SidebarRoleEntryDto], description: 'The tenant’s and global roles; empty unless canApplyToRoles.' })
  roles: SidebarRoleEntryDto[];
  @ApiProperty({ type: SidebarScopeAnswerDto }) scope: SidebarScopeAnswerDto;
}

export class SidebarPreferencesSavedDto extends SidebarPreferencesDto {
  @ApiProperty({ type: [String], format: 'uuid', description: 'Roles the settings were also saved for (user scope).' })
  appliedRoles: string[];
  @ApiProperty({ type: [String], format: 'uuid', description: 'Roles whose preferences were removed (user scope).' })
  clearedRoles: string[];
}

export class SidebarPreferenceRemovedDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: SidebarScopeAnswerDto, description: 'Always the role scope: {type: "role", roleId}.' }) scope: SidebarScopeAnswerDto;
}

export class SidebarVariantDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: SidebarSettingsDto }) settings: SidebarSettingsDto;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) updatedAt: string | null;
}

export class SidebarVariantListDto {
  @ApiProperty({ example: 'en' }) locale: string;
  @ApiProperty({ type: [SidebarVariantDto], description: 'Oldest first.' }) variants: SidebarVariantDto[];
}

export class SidebarVariantCreatedDto {
  @ApiProperty({ example: 'en' }) locale: string;
  @ApiProperty({ type: SidebarVariantDto }) variant: SidebarVariantDto;
}
