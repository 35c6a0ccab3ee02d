import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { trimString } from '../../core/http/common.dto.js';

export const ROLE_NAME_MAX_LENGTH = 100;
export const ROLES_PAGE_SIZE_DEFAULT = 50;
export const ROLES_PAGE_SIZE_MAX = 100;
export const ROLES_PAGE_MAX = 100_000;
export const ACL_FEATURES_MAX = 500;
export const FEATURE_ID_MAX_LENGTH = 128;
export const ACL_ORGANIZATIONS_MAX = 1000;

const trimEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v.trim() : v)) : value;

// ---- requests ---------------------------------------------------------------------------------

export class ListRolesQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the role with this id.' })
  @IsOptional()
  @IsUUID()
  id?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: ROLES_PAGE_MAX, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ROLES_PAGE_MAX)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: ROLES_PAGE_SIZE_MAX, default: ROLES_PAGE_SIZE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ROLES_PAGE_SIZE_MAX)
  pageSize?: number;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the role name.', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The roles usable in this tenant: its own roles plus the global roles, with usersCount counted in that tenant. ' +
      'Only super administrators may name another tenant than their own; for anyone else such a filter yields an empty list.',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class CreateRoleDto {
  @ApiProperty({
    minLength: 1,
    maxLength: ROLE_NAME_MAX_LENGTH,
    description: 'Trimmed; unique (case-insensitive) per tenant, and among global roles.',
  })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(ROLE_NAME_MAX_LENGTH)
  name: string;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    description:
      'Owning tenant. Super administrators: omitted or null creates a global role, any existing tenant may be named. ' +
      'Everyone else: omitted means the caller’s own tenant, naming another tenant is 403 (only super administrators create global roles).',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string | null;
}

export class UpdateRoleDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: ROLE_NAME_MAX_LENGTH, description: 'New name (trimmed); omitted keeps the name.' })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(ROLE_NAME_MAX_LENGTH)
  name?: string;
}

export class RoleIdQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;
}

export class RoleAclQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() roleId: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Tenant whose ACL of the role to read; default the caller’s. Only super administrators may name another tenant (404 otherwise).',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class UserAclQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() userId: string;
}

export class UpdateRoleAclDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() roleId: string;

  @ApiProperty({
    type: [String],
    maxItems: ACL_FEATURES_MAX,
    description: 'Feature ids or wildcards (`x.*`, `*`); replaces the stored list.',
  })
  @Transform(trimEach)
  @IsArray()
  @ArrayMaxSize(ACL_FEATURES_MAX)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(FEATURE_ID_MAX_LENGTH, { each: true })
  features: string[];

  @ApiPropertyOptional({ default: false, description: 'Only a super administrator may set it (403 otherwise).' })
  @IsOptional()
  @IsBoolean()
  isSuperAdmin?: boolean;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    nullable: true,
    description:
      'Organization ids of the tenant the role is restricted to; null: no restriction; omitted: the caller’s own restriction ' +
      '(no restriction for an unrestricted caller). A caller restricted to organizations may only name those (403 otherwise).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ACL_ORGANIZATIONS_MAX)
  @IsUUID(undefined, { each: true })
  organizations?: string[] | null;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Tenant whose ACL of the role to replace; default the caller’s. Only super administrators may name another tenant (404 otherwise).',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class UpdateUserAclDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() userId: string;

  @ApiPropertyOptional({ type: [String], maxItems: ACL_FEATURES_MAX, description: 'Replaces the stored features; omitted keeps them.' })
  @IsOptional()
  @Transform(trimEach)
  @IsArray()
  @ArrayMaxSize(ACL_FEATURES_MAX)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(FEATURE_ID_MAX_LENGTH, { each: true })
  features?: string[];

  @ApiPropertyOptional({
    description: 'Omitted keeps the stored value. Coerced to false (sanitized) unless the caller is a super administrator.',
  })
  @IsOptional()
  @IsBoolean()
  isSuperAdmin?: boolean;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    nullable: true,
    description:
      'Organization ids of the user’s tenant; null: no restriction; omitted keeps the stored value (no stored ACL: the ' +
      'caller’s own restriction). A caller restricted to organizations gets the result narrowed to those (sanitized).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ACL_ORGANIZATIONS_MAX)
  @IsUUID(undefined, { each: true })
  organizations?: string[] | null;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class RoleItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    type: 'integer',
    description:
      'Memberships of users that are not deleted (for a global role: in the listed tenant; all tenants for a super administrator without a tenantId filter).',
  })
  usersCount: number;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null: global role' }) tenantId: string | null;
  @ApiProperty({ type: String, nullable: true }) tenantName: string | null;
}

export class RoleListDto {
  @ApiProperty({ type: [RoleItemDto] }) items: RoleItemDto[];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) totalPages: number;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
}

export class AclWriteResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({
    description:
      'True when features the caller may not grant were dropped, isSuperAdmin coerced to false, or organizations narrowed to the caller’s restriction.',
  })
  sanitized: boolean;
}

export class RoleAclDto {
  @ApiProperty() isSuperAdmin: boolean;
  @ApiProperty({ type: [String] }) features: string[];
  @ApiProperty({ type: [String], format: 'uuid', nullable: true, description: 'null: no organization restriction' })
  organizations: string[] | null;
}

export class UserAclDto extends RoleAclDto {
  @ApiProperty({ description: 'False when the user has no custom ACL (role ACLs apply).' }) hasCustomAcl: boolean;
}
