import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { trimString } from '../../core/http/common.dto.js';

export const ROLE_NAME_MAX_LENGTH = 100;
export const ROLES_PAGE_SIZE_DEFAULT = 50;
export const ROLES_PAGE_SIZE_MAX = 100;
export const ROLES_PAGE_MAX = 100_000;

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
