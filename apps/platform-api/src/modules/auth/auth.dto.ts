import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsNotEmpty, IsOptional, IsString, IsUUID, Matches, MaxLength, MinLength } from 'class-validator';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './credentials.js';

const truthy = ({ value }: { value: unknown }) => value === true || ['1', 'true', 'on', 'yes'].includes(String(value).toLowerCase());

/** Form-urlencoded (or JSON) login. */
export class LoginDto {
  @ApiProperty() @IsEmail() @MaxLength(320) email: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(PASSWORD_MAX_LENGTH) password: string;
  @ApiPropertyOptional({ description: 'Truthy: a 30-day session and a refreshToken in the body.' })
  @IsOptional()
  @Transform(truthy)
  remember?: boolean;
  @ApiPropertyOptional({
    description:
      'The tenant to log into. Without it, among the accounts with this email in active tenants, the oldest one that has a password is checked (one password verification per login).',
  })
  @IsOptional()
  @IsUUID()
  tenantId?: string;
  @ApiPropertyOptional({
    description:
      'Where the client wants to go after login; echoed as `redirect` when it is a path on this site or a URL on an allowed origin, else "/" (control characters and backslashes are never safe).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  redirect?: string;
}

export class RefreshDto {
  @ApiProperty() @IsString() @IsNotEmpty({ message: 'refreshToken is required' }) @MaxLength(512) refreshToken: string;
}

/** decisions.md: `POST /auth/feature-check` takes at most 50 features, each at most 128 characters. */
export const FEATURE_CHECK_MAX_FEATURES = 50;
export const FEATURE_CHECK_MAX_FEATURE_LENGTH = 128;

/** What the route validates; FeatureCheckFastPath answers only bodies this class accepts as they are. */
export class FeatureCheckDto {
  @ApiProperty({ type: [String], maxItems: FEATURE_CHECK_MAX_FEATURES })
  @IsArray({ message: 'features must be an array' })
  @ArrayMaxSize(FEATURE_CHECK_MAX_FEATURES, { message: `at most ${FEATURE_CHECK_MAX_FEATURES} features` })
  @IsString({ each: true })
  @IsNotEmpty({ each: true, message: 'features must be non-empty strings' })
  @MaxLength(FEATURE_CHECK_MAX_FEATURE_LENGTH, { each: true })
  features: string[];
}

export class UpdateProfileDto {
  @ApiPropertyOptional({ description: 'New email (needs currentPassword).' }) @IsOptional() @IsEmail() @MaxLength(320) email?: string;
  @ApiPropertyOptional({ description: 'New password (needs currentPassword); ends the caller’s other sessions.' })
  @IsOptional()
  @IsString()
  @MinLength(PASSWORD_MIN_LENGTH)
  @MaxLength(PASSWORD_MAX_LENGTH)
  password?: string;
  @ApiPropertyOptional({
    description: 'The account’s current password: required to change email or password (400 when missing, 403 when wrong).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(PASSWORD_MAX_LENGTH)
  currentPassword?: string;
}

export class LocaleDto {
  @ApiProperty({ example: 'en' }) @IsString() @Matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/) locale: string;
}

export class ResetRequestDto {
  @ApiProperty() @IsEmail() @MaxLength(320) email: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() tenantId?: string;
}

export class ResetConfirmDto {
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(512) token: string;
  @ApiProperty() @IsString() @MinLength(PASSWORD_MIN_LENGTH) @MaxLength(PASSWORD_MAX_LENGTH) password: string;
}
