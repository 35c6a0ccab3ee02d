import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength } from 'class-validator';
import { trimString } from '../../core/http/common.dto.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/credentials.js';

export const USERS_PAGE_SIZE_DEFAULT = 50;
export const USERS_PAGE_SIZE_MAX = 100;
export const USER_NAME_MAX_LENGTH = 200;
export const USER_ROLES_MAX = 50;

// ---- requests ---------------------------------------------------------------------------------

export class ListUsersQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the user with this id.' })
  @IsOptional()
  @IsUUID()
  id?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: USERS_PAGE_SIZE_MAX, default: USERS_PAGE_SIZE_DEFAULT, description: 'Above 100 is 400.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(USERS_PAGE_SIZE_MAX)
  pageSize?: number;

  @ApiPropertyOptional({ maxLength: 200, description: 'Case-insensitive substring of the email or the name.' })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(200)
  search?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Super administrators: users of this tenant (omitted: every tenant). Everyone else only ever sees its own tenant; ' +
      'naming another tenant yields an empty list.',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only users holding this role.' })
  @IsOptional()
  @IsUUID()
  roleId?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Only users of this organization (403 outside the caller’s organization restriction).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;
}

export class CreateUserDto {
  @ApiProperty({ maxLength: 320, description: 'Stored lower-cased; unique per tenant (409 otherwise).' })
  @Transform(trimString)
  @IsEmail()
  @MaxLength(320)
  email: string;

  @ApiPropertyOptional({
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'Omitted: the user is sent an invitation with a 48-hour setup link instead.',
  })
  @IsOptional()
  @IsString()
  @MinLength(PASSWORD_MIN_LENGTH)
  @MaxLength(PASSWORD_MAX_LENGTH)
  password?: string;

  @ApiPropertyOptional({ maxLength: USER_NAME_MAX_LENGTH, description: 'Trimmed; blank means no name.' })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(USER_NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: USER_ROLES_MAX,
    description:
      'Roles of the user’s tenant or global roles (400 otherwise). A caller who is not a super administrator may only ' +
      'assign roles whose ACL in that tenant grants nothing beyond its own access (403 otherwise).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(USER_ROLES_MAX)
  @IsUUID(undefined, { each: true })
  roleIds?: string[];

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Default: the caller’s organization (when creating in the caller’s tenant). Must belong to the tenant (400) and lie within the caller’s organization restriction (403).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Default: the caller’s tenant. Only a super administrator may name another tenant (403 otherwise).',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class UpdateUserDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;

  @ApiPropertyOptional({ maxLength: 320 }) @IsOptional() @Transform(trimString) @IsEmail() @MaxLength(320) email?: string;

  @ApiPropertyOptional({
    minLength: PASSWORD_MIN_LENGTH,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'Sets the password and ends every session of the user.',
  })
  @IsOptional()
  @IsString()
  @MinLength(PASSWORD_MIN_LENGTH)
  @MaxLength(PASSWORD_MAX_LENGTH)
  password?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: USER_NAME_MAX_LENGTH, description: 'null or blank clears the name.' })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(USER_NAME_MAX_LENGTH)
  name?: string | null;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: USER_ROLES_MAX,
    description: 'Replaces the user’s roles in its tenant ([] removes them all); same checks as on create.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(USER_ROLES_MAX)
  @IsUUID(undefined, { each: true })
  roleIds?: string[];

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'null detaches the user from its organization (callers restricted to organizations may not).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string | null;
}

export class UserIdQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;
}

export class ResendInviteDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class UserRoleRefDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class UserListItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ type: [UserRoleRefDto], description: 'The user’s roles in its tenant, by name.' }) roles: UserRoleRefDto[];
  @ApiProperty({ format: 'uuid' }) tenantId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) organizationId: string | null;
  @ApiProperty({ description: 'False for an invited user who has not set a password yet.' }) hasPassword: boolean;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
}

export class UserListDto {
  @ApiProperty({ type: [UserListItemDto] }) items: UserListItemDto[];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer', description: 'At least 1.' }) totalPages: number;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
}
