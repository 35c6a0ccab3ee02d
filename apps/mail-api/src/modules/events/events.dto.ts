import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsISO8601, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength, registerDecorator } from 'class-validator';
import {
  RESERVED_EVENT_PREFIXES,
  type ContactDataPrimitive,
  type MailEventName,
  type MailList,
  type MailTrackedEvent,
  type MailTrackResult,
} from '@app/contracts';
import { IdPageQuery, PageLimitQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { IsContactData } from '../contacts/contact-data.js';
import { MAX_EMAIL_LENGTH } from '../contacts/contacts.dto.js';

export const MAX_EVENT_NAME_LENGTH = 128;

export function isReservedEventName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_EVENT_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** Event names of the service's own events (`email.*`, `contact.*`, any letter case) are a 422. */
function IsNotReservedEventName(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isNotReservedEventName',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !isReservedEventName(value),
        defaultMessage: () => `event names starting with ${RESERVED_EVENT_PREFIXES.map((p) => `"${p}"`).join(' or ')} are reserved`,
      },
    });
}

export class TrackBody {
  @ApiProperty({ format: 'email', maxLength: MAX_EMAIL_LENGTH })
  @Transform(trimString)
  @IsEmail()
  @MaxLength(MAX_EMAIL_LENGTH)
  email: string;

  @ApiProperty({
    maxLength: MAX_EVENT_NAME_LENGTH,
    example: 'signed-up',
    description: 'Names starting with `email.` or `contact.` are reserved.',
  })
  @Transform(trimString)
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_EVENT_NAME_LENGTH)
  @IsNotReservedEventName()
  @HasNoNulCharacter()
  event: string;

  @ApiPropertyOptional({ description: 'Default true for a new contact; an existing contact keeps its flag unless given.' })
  @IsOptional()
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Values are primitives or `{value, persistent}`. Persistent values (the default) are merged into the ' +
      "contact's data (`null` deletes the key); `persistent: false` values are recorded on this event only. " +
      'The event records every value.',
  })
  @IsOptional()
  @IsContactData()
  data?: Record<string, unknown>;
}

export class TrackResultDto implements MailTrackResult {
  @ApiProperty({ format: 'uuid', description: 'Id of the contact (created or updated).' }) contact: string;
  @ApiProperty({ format: 'uuid', description: 'Id of the recorded event.' }) event: string;
  @ApiProperty({ format: 'date-time', description: 'When the event was recorded.' }) timestamp: string;
}

export class TrackResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: TrackResultDto }) data: TrackResultDto;
}

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
