import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsNotEmpty, IsOptional, IsString, MaxLength, registerDecorator } from 'class-validator';
import { RESERVED_EVENT_PREFIXES, type MailTrackResult } from '@app/contracts';
import { trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { IsContactData } from '../contacts/contact-data.js';
import { MAX_EMAIL_LENGTH } from '../contacts/contacts.dto.js';
import { MAX_EVENT_NAME_LENGTH } from '../events/events.dto.js';

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

  @ApiPropertyOptional({
    description:
      'Default true for a new contact; an existing contact keeps its flag unless given. With the public key, ' +
      'only a contact this call creates takes it.',
  })
  @IsOptional()
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Values are primitives or `{value, persistent}`. Persistent values (the default) are merged into the ' +
      "contact's data (`null` deletes the key); `persistent: false` values are recorded on this event only. " +
      'The event records every value. With the public key, only keys the contact does not have are added.',
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
