import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const SIDEBAR_MANAGE_FEATURE = 'auth.sidebar.manage';
export const VARIANT_NAME_MAX_LENGTH = 100;
const MAX_ROLE_IDS = 500;

const SETTINGS_DOC = {
  description:
    'Sidebar settings {version, groupOrder, groupLabels, itemLabels, hiddenItems, itemOrder}; normalised on save ' +
    '(version 2, strings trimmed, blanks, duplicates and non-strings dropped, empty itemOrder lists removed, unknown keys dropped).',
  type: 'object',
  additionalProperties: true,
} as const;

export class SidebarScopeDto {
  @ApiProperty({ enum: ['user', 'role'] }) @IsIn(['user', 'role']) type: 'user' | 'role';
  @ApiPropertyOptional({ description: 'Required when type is role.' })
  @ValidateIf((scope: SidebarScopeDto) => scope.type === 'role')
  @IsUUID('all', { message: 'scope.roleId must be a UUID' })
  roleId?: string;
}

export class UpdateSidebarPreferencesDto {
  @ApiPropertyOptional({ type: SidebarScopeDto, description: 'Default {type: "user"}.' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => SidebarScopeDto)
  scope?: SidebarScopeDto;

  @ApiProperty(SETTINGS_DOC) @IsObject({ message: 'settings must be an object' }) settings: Record<string, unknown>;

  @ApiPropertyOptional({ type: [String], description: 'User scope only: also save these settings for these roles.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ROLE_IDS)
  @IsUUID('all', { each: true })
  applyToRoles?: string[];

  @ApiPropertyOptional({ type: [String], description: 'User scope only: remove these roles’ preferences (tenant and locale).' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ROLE_IDS)
  @IsUUID('all', { each: true })
  clearRoleIds?: string[];
}

export class RolePreferenceQueryDto {
  @ApiProperty() @IsUUID('all', { message: 'roleId must be a UUID' }) roleId: string;
}

export class CreateSidebarVariantDto {
  @ApiPropertyOptional({ maxLength: VARIANT_NAME_MAX_LENGTH, description: 'Blank or omitted: "My preferences", "My preferences 2", ...' })
  @IsOptional()
  @IsString()
  @MaxLength(VARIANT_NAME_MAX_LENGTH)
  name?: string | null;

  @ApiPropertyOptional(SETTINGS_DOC) @IsOptional() @IsObject({ message: 'settings must be an object' }) settings?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Activating a variant deactivates the caller’s other variants (tenant and locale).' })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}
