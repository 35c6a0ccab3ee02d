import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** 2xx bodies of the auth routes (platform-api.md "Authentication and accounts"), for the OpenAPI document. */

export class LoginResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ description: 'The access token (also set as the auth_token cookie).' }) token: string;
  @ApiProperty({ type: String, nullable: true, description: 'The safe form of the requested redirect; null when none was asked.' })
  redirect: string | null;
  @ApiPropertyOptional({ description: 'Only with `remember`: for POST /auth/session/refresh.' }) refreshToken?: string;
}

export class RefreshResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty() accessToken: string;
  @ApiProperty({ type: 'integer', description: 'Seconds.' }) expiresIn: number;
}

export class ProfileDto {
  @ApiProperty({ description: 'The account’s email.' }) email: string;
  @ApiProperty({ type: [String], description: 'Role names.' }) roles: string[];
}

export class ProfileUpdatedDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ description: 'The account’s email after the change.' }) email: string;
}

export class FeatureCheckResultDto {
  @ApiProperty({ description: 'Every asked feature is granted.' }) ok: boolean;
  @ApiProperty({ type: [String], description: 'The asked features the caller holds.' }) granted: string[];
  @ApiProperty({ format: 'uuid' }) userId: string;
}

export class ResetConfirmResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ example: '/login' }) redirect: string;
}

/** GET and POST /auth/locale answer the locale as a bare JSON string. */
export const LOCALE_SCHEMA = { type: 'string', example: 'en' } as const;
