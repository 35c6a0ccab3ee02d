import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { trimString } from '../../core/http/common.dto.js';

export const CONSENT_TYPE_MAX_LENGTH = 100;
export const CONSENT_SOURCE_MAX_LENGTH = 100;

// ---- requests ---------------------------------------------------------------------------------

export class ConsentsQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() userId: string;
}

export class CreateConsentDto {
  @ApiProperty({ format: 'uuid' }) @IsUUID() userId: string;

  @ApiProperty({ minLength: 1, maxLength: CONSENT_TYPE_MAX_LENGTH, example: 'marketing_email', description: 'Trimmed.' })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(CONSENT_TYPE_MAX_LENGTH)
  consentType: string;

  @ApiProperty({ description: 'true: consent given (grantedAt set); false: consent withdrawn (withdrawnAt set).' })
  @IsBoolean()
  isGranted: boolean;

  @ApiPropertyOptional({
    maxLength: CONSENT_SOURCE_MAX_LENGTH,
    example: 'signup_form',
    description: 'Where the consent was collected; trimmed, blank means none.',
  })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(CONSENT_SOURCE_MAX_LENGTH)
  source?: string;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class ConsentRecordDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty() consentType: string;
  @ApiProperty() isGranted: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) grantedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) withdrawnAt: string | null;
  @ApiProperty({ type: String, nullable: true }) ipAddress: string | null;
  @ApiProperty({ type: String, nullable: true }) source: string | null;
  @ApiProperty({
    description:
      'HMAC-SHA256 (hex, key CONSENT_INTEGRITY_SECRET) over `userId|consentType|isGranted|grantedAt|withdrawnAt|ipAddress|source`: ' +
      'isGranted as true/false, dates as ISO 8601 UTC with milliseconds, null as the empty string, `\\` and `|` inside values escaped with `\\`.',
  })
  integrityHash: string;
  @ApiProperty({ description: 'The stored hash matches the record (timing-safe comparison); false means the row was altered.' })
  integrityValid: boolean;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
}

export class ConsentListDto {
  @ApiProperty({ type: [ConsentRecordDto], description: 'Newest first.' }) items: ConsentRecordDto[];
}
