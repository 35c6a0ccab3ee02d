import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ContactDataPrimitive, MailContact, MailContactList, MailContactUpsertResult } from '@app/contracts';
import { IdPageQuery, toBooleanQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { IsContactData, MAX_DATA_KEYS } from './contact-data.js';

export const MAX_EMAIL_LENGTH = 254;

const DATA_DESCRIPTION =
  `Merged into the contact's data, key by key. A value is a string, number, boolean or null, or ` +
  '`{value, persistent}`: `null` deletes the key; `persistent: false` values are not stored on the contact ' +
  `(they only matter to a tracked event). At most ${MAX_DATA_KEYS} keys per request.`;

export class UpsertContactBody {
  @ApiProperty({ format: 'email', maxLength: MAX_EMAIL_LENGTH, description: 'Unique per project, case-insensitively.' })
  @Transform(trimString)
  @IsEmail()
  @MaxLength(MAX_EMAIL_LENGTH)
  email: string;

  @ApiPropertyOptional({ description: 'Default true for a new contact; an existing contact keeps its flag unless given.' })
  @IsOptional()
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: DATA_DESCRIPTION })
  @IsOptional()
  @IsContactData()
  data?: Record<string, unknown>;
}

export class UpdateContactBody {
  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: DATA_DESCRIPTION })
  @IsOptional()
  @IsContactData()
  data?: Record<string, unknown>;
}

export class ListContactsQuery extends IdPageQuery {
  @ApiPropertyOptional({ description: 'Only subscribed (`true`) or unsubscribed (`false`) contacts.' })
  @IsOptional()
  @Transform(toBooleanQuery)
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the email.', maxLength: MAX_EMAIL_LENGTH })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(MAX_EMAIL_LENGTH)
  @HasNoNulCharacter()
  search?: string;
}

export class ContactResponse implements MailContact {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty() subscribed: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: Record<string, ContactDataPrimitive>;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

class UpsertMeta {
  @ApiProperty() isNew: boolean;
  @ApiProperty() isUpdate: boolean;
}

export class ContactUpsertResponse extends ContactResponse implements MailContactUpsertResult {
  @ApiProperty({ type: UpsertMeta }) _meta: UpsertMeta;
}

export class ContactListResponse implements MailContactList {
  @ApiProperty({ type: [ContactResponse] }) contacts: ContactResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  cursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Contacts matching the filters, over all pages.' }) total: number;
}
