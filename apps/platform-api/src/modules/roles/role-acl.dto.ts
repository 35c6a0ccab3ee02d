import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

export const ACL_FEATURES_MAX = 500;
export const FEATURE_ID_MAX_LENGTH = 128;
export const ACL_ORGANIZATIONS_MAX = 1000;

export const trimEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? (value as unknown[]).map((v) => (typeof v === 'string' ? v.trim() : v)) : value;

/** The grant boundary, as the ACL routes' OpenAPI descriptions state it (roles and users alike). */
export const GRANT_BOUNDARY =
  'A caller who is not a super administrator cannot grant isSuperAdmin, `*`, a feature or wildcard it does not hold, ' +
  'or organizations outside its own restriction, and cannot read or change a super administrator’s ACL (403). ';

// ---- requests ---------------------------------------------------------------------------------

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

// ---- responses (OpenAPI; the user ACL's answers extend them) ------------------------------------

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
