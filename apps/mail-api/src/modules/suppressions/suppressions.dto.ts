import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IdPageQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';

export const SUPPRESSION_REASONS = ['HARD_BOUNCE', 'COMPLAINT', 'MANUAL'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
export const SUPPRESSION_SOURCES = ['smtp', 'dsn', 'arf', 'api'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];
/** RFC 5321's longest forward path. */
export const MAX_EMAIL = 254;

/** One suppressed address of a project. */
export interface MailSuppression {
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  /** The server's reply line (smtp), the report's status and diagnostic (dsn), the feedback type (arf); else null. */
  detail: string | null;
  createdAt: string;
}

export interface MailSuppressionImport {
  imported: number;
  skipped: number;
  invalid: number;
}

export class ListSuppressionsQuery extends IdPageQuery {
  @ApiPropertyOptional({ enum: SUPPRESSION_REASONS })
  @IsOptional()
  @IsIn(SUPPRESSION_REASONS)
  reason?: SuppressionReason;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the address.', maxLength: MAX_EMAIL })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(MAX_EMAIL)
  @HasNoNulCharacter()
  search?: string;
}

export class CreateSuppressionBody {
  @ApiProperty({ format: 'email', maxLength: MAX_EMAIL, description: 'Compared case-insensitively.' })
  @Transform(trimString)
  @IsEmail()
  @MaxLength(MAX_EMAIL)
  email: string;
}

export class SuppressionResponse implements MailSuppression {
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ enum: SUPPRESSION_REASONS }) reason: SuppressionReason;
  @ApiProperty({ enum: SUPPRESSION_SOURCES }) source: SuppressionSource;
  @ApiProperty({ type: String, nullable: true }) detail: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class SuppressionListResponse {
  @ApiProperty({ type: [SuppressionResponse] }) items: SuppressionResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty() total: number;
}

export class SuppressionImportResponse implements MailSuppressionImport {
  @ApiProperty({ description: 'Rows added to the list.' }) imported: number;
  @ApiProperty({ description: 'Valid rows whose address was already listed (or repeated in the file).' }) skipped: number;
  @ApiProperty({ description: 'Rows without a valid address or with an unknown reason.' }) invalid: number;
}
