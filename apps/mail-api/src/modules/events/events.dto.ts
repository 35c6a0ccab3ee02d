import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsISO8601, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import type { ContactDataPrimitive, MailEventName, MailList, MailTrackedEvent } from '@app/contracts';
import { IdPageQuery, PageLimitQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';

export const MAX_EVENT_NAME_LENGTH = 128;

export class ListEventsQuery extends IdPageQuery {
  @ApiPropertyOptional({ description: 'Only events of this name.' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_EVENT_NAME_LENGTH)
  @HasNoNulCharacter()
  name?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only events of this contact.' })
  @IsOptional()
  @IsUUID()
  contactId?: string;

  @ApiPropertyOptional({ format: 'email', description: 'Only events of the contact with this email.' })
  @IsOptional()
  @Transform(trimString)
  @IsEmail()
  email?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only events recorded at or after this time.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only events recorded before this time.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;
}

export class ListEventNamesQuery extends PageLimitQuery {
  @ApiPropertyOptional({ description: 'The `nextCursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(400)
  @HasNoNulCharacter({ decodeCursor: true })
  cursor?: string;
}

class EventContactDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'email' }) email: string;
}

export class TrackedEventDto implements MailTrackedEvent {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: EventContactDto }) contact: EventContactDto;
  @ApiProperty({ type: 'object', additionalProperties: true }) data: Record<string, ContactDataPrimitive>;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class EventListResponse implements MailList<MailTrackedEvent> {
  @ApiProperty({ type: [TrackedEventDto] }) items: TrackedEventDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty() total: number;
}

export class EventNameDto implements MailEventName {
  @ApiProperty() name: string;
  @ApiProperty({ description: 'How many events of this name the project has.' }) count: number;
  @ApiProperty({ format: 'date-time' }) lastTrackedAt: string;
}

export class EventNameListResponse implements MailList<MailEventName> {
  @ApiProperty({ type: [EventNameDto] }) items: EventNameDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty() total: number;
}
