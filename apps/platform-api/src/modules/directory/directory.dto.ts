import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { SLUG_PATTERN } from './organization-slug.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Far beyond any real directory; keeps `(page - 1) * pageSize` a valid Postgres OFFSET. */
export const MAX_PAGE = 1_000_000;
const NAME_MAX_LENGTH = 200;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** List conventions shared with roles and users: id, page, pageSize (at most 100), search. */
export class DirectoryListQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsUUID() id?: string;
  @ApiPropertyOptional({ default: 1, maximum: MAX_PAGE }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_PAGE) page?: number;
  @ApiPropertyOptional({ default: DEFAULT_PAGE_SIZE, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name (organizations: or the slug).' })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_MAX_LENGTH)
  search?: string;
}

export class OrganizationListQueryDto extends DirectoryListQueryDto {
  @ApiPropertyOptional({ description: 'Super administrators: filter by tenant. Others only ever see their own tenant.' })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class IdQueryDto {
  @ApiProperty() @IsUUID('all', { message: 'id must be a UUID' }) id: string;
}

export class CreateTenantDto {
  @ApiProperty() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(NAME_MAX_LENGTH) name: string;
}

export class UpdateTenantDto {
  @ApiProperty() @IsUUID() id: string;
  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(NAME_MAX_LENGTH) name?: string;
  @ApiPropertyOptional({ description: 'Super administrators only.' }) @IsOptional() @IsBoolean() isActive?: boolean;
}

export class CreateOrganizationDto {
  @ApiProperty() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(NAME_MAX_LENGTH) name: string;
  @ApiPropertyOptional({ pattern: SLUG_PATTERN.source, description: 'Omitted: derived from the name, suffixed -2, -3, ... to be unique.' })
  @IsOptional()
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must match ^[a-z0-9][a-z0-9-]{0,62}$' })
  slug?: string;
  @ApiPropertyOptional({ description: 'Default: the caller’s tenant; only a super administrator may name another.' })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
}

export class UpdateOrganizationDto {
  @ApiProperty() @IsUUID() id: string;
  @ApiPropertyOptional() @IsOptional() @Transform(trim) @IsString() @IsNotEmpty() @MaxLength(NAME_MAX_LENGTH) name?: string;
  @ApiPropertyOptional({ pattern: SLUG_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must match ^[a-z0-9][a-z0-9-]{0,62}$' })
  slug?: string;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() isActive?: boolean;
}

export interface Paged<T> {
  items: T[];
  total: number;
  totalPages: number;
  page: number;
  pageSize: number;
}
