import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { ACL_FEATURES_MAX, ACL_ORGANIZATIONS_MAX, FEATURE_ID_MAX_LENGTH, RoleAclDto, trimEach } from '../roles/role-acl.dto.js';

// ---- requests ---------------------------------------------------------------------------------

export class UserAclQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() userId: string;
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

export class UserAclDto extends RoleAclDto {
  @ApiProperty({ description: 'False when the user has no custom ACL (role ACLs apply).' }) hasCustomAcl: boolean;
}
