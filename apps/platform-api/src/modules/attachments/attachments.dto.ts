import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { trimString } from '../../core/http/common.dto.js';
import { DEFAULT_PARTITION, PARTITION_CODES } from './attachment-partitions.js';

export const ATTACHMENTS_PAGE_SIZE_DEFAULT = 50;
export const ATTACHMENTS_PAGE_SIZE_MAX = 200;
export const ATTACHMENTS_PAGE_MAX = 100_000;
export const IDENTIFIER_MAX_LENGTH = 255;
export const IMAGE_SIZE_MAX = 4000;
export const CROP_TYPES = ['cover', 'contain'] as const;
export type CropType = (typeof CROP_TYPES)[number];

// ---- requests ---------------------------------------------------------------------------------

/** The record an attachment belongs to: `entityId` names the kind of record (`crm:person`), `recordId` the record. */
class RecordRefDto {
  @ApiProperty({ maxLength: IDENTIFIER_MAX_LENGTH, example: 'crm:person' })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(IDENTIFIER_MAX_LENGTH)
  entityId: string;

  @ApiProperty({ maxLength: IDENTIFIER_MAX_LENGTH })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(IDENTIFIER_MAX_LENGTH)
  recordId: string;
}

/** The text fields of the multipart upload; the file itself is the part named `file`. */
export class UploadAttachmentDto extends RecordRefDto {
  @ApiPropertyOptional({ enum: PARTITION_CODES, default: DEFAULT_PARTITION })
  @IsOptional()
  @IsIn(PARTITION_CODES)
  partitionCode?: string;
}

export class ListAttachmentsQuery extends RecordRefDto {
  @ApiPropertyOptional({ minimum: 1, maximum: ATTACHMENTS_PAGE_MAX, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ATTACHMENTS_PAGE_MAX)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: ATTACHMENTS_PAGE_SIZE_MAX, default: ATTACHMENTS_PAGE_SIZE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ATTACHMENTS_PAGE_SIZE_MAX)
  pageSize?: number;
}

export class AttachmentIdQuery {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;
}

export class AttachmentIdParams {
  @ApiProperty({ format: 'uuid' }) @IsUUID() id: string;
}

export class ImageParams extends AttachmentIdParams {
  @ApiPropertyOptional({ description: 'Free text for readable URLs; ignored.' })
  @IsOptional()
  @IsString()
  slug?: string;
}

export class FileQuery {
  @ApiPropertyOptional({ enum: ['1'], description: '`1` serves the file as a download (Content-Disposition: attachment).' })
  @IsOptional()
  @IsString()
  download?: string;
}

export class ImageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: IMAGE_SIZE_MAX })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(IMAGE_SIZE_MAX)
  width?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: IMAGE_SIZE_MAX })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(IMAGE_SIZE_MAX)
  height?: number;

  @ApiPropertyOptional({ enum: CROP_TYPES, default: 'cover' })
  @IsOptional()
  @IsIn(CROP_TYPES)
  cropType?: CropType;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class AttachmentItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: '/attachments/file/6f1c...' }) url: string;
  @ApiProperty() fileName: string;
  @ApiProperty({ type: 'integer' }) fileSize: number;
  @ApiProperty({ type: String, nullable: true, description: 'Sniffed from the bytes, never the client’s claim.' })
  mimeType: string | null;
  @ApiProperty({ enum: PARTITION_CODES }) partitionCode: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true, description: 'Extracted text content: not extracted (always null).' })
  content: string | null;
}

export class AttachmentListDto {
  @ApiProperty({ type: [AttachmentItemDto] }) items: AttachmentItemDto[];
}

export class UploadResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: AttachmentItemDto }) item: AttachmentItemDto;
}
