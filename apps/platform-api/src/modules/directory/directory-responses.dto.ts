import { ApiProperty } from '@nestjs/swagger';

/** 2xx bodies of the directory routes, for the OpenAPI document (the spec leaves the lookups' bodies "not shown"). */

/** What a lookup names: the tenant, or the base of the organization. */
export class DirectoryRefDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

export class OrganizationRefDto extends DirectoryRefDto {
  @ApiProperty() slug: string;
}

export class TenantLookupDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: DirectoryRefDto }) tenant: DirectoryRefDto;
}

export class OrganizationLookupDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: OrganizationRefDto }) organization: OrganizationRefDto;
}

export class TenantListItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: 'integer' }) organizationsCount: number;
  @ApiProperty({ type: 'integer', description: 'Users not deleted.' }) usersCount: number;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
}

export class OrganizationListItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenantId: string;
  @ApiProperty() tenantName: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: 'integer', description: 'Users not deleted.' }) usersCount: number;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
}

/** The list conventions shared with roles and users (paging.ts). */
class DirectoryPageDto {
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer', description: 'At least 1.' }) totalPages: number;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
}

export class TenantPageDto extends DirectoryPageDto {
  @ApiProperty({ type: [TenantListItemDto] }) items: TenantListItemDto[];
}

export class OrganizationPageDto extends DirectoryPageDto {
  @ApiProperty({ type: [OrganizationListItemDto] }) items: OrganizationListItemDto[];
}
