import { ApiProperty } from '@nestjs/swagger';

/** GET /auth/admin/nav (platform-api.md "Backend chrome payload"), for the OpenAPI document. */

export class NavLinkDto {
  @ApiProperty() href: string;
  @ApiProperty() title: string;
}

export class NavGroupDto {
  @ApiProperty() name: string;
  @ApiProperty({ type: [NavLinkDto] }) items: NavLinkDto[];
}

export class NavSectionItemDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
  @ApiProperty() href: string;
}

export class NavSectionDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
  @ApiProperty({ type: [NavSectionItemDto] }) items: NavSectionItemDto[];
}

export class AdminNavDto {
  @ApiProperty({ type: [NavGroupDto] }) groups: NavGroupDto[];
  @ApiProperty({ type: [NavSectionDto] }) settingsSections: NavSectionDto[];
  @ApiProperty({ type: [String] }) settingsPathPrefixes: string[];
  @ApiProperty({ type: [NavSectionDto] }) profileSections: NavSectionDto[];
  @ApiProperty({ type: [String] }) profilePathPrefixes: string[];
  @ApiProperty({ type: [String], description: 'As granted (wildcards kept); ["*"] for super administrators.' }) grantedFeatures: string[];
  @ApiProperty({ type: [String], description: 'Role names.' }) roles: string[];
}
