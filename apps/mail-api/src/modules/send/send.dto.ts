import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import type { MailAddressInput, MailSendAttachment, MailSendResult } from '@app/contracts';
import { trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { MAX_EMAIL_LENGTH } from '../contacts/contacts.dto.js';
import {
  MAX_ATTACHMENTS,
  MAX_BODY_BYTES,
  MAX_DATA_BYTES,
  MAX_HEADERS,
  MAX_NAME_LENGTH,
  MAX_RECIPIENTS,
  MAX_RENDERED_SUBJECT_LENGTH,
  MAX_SUBJECT_LENGTH,
} from './send-message.js';
import { MaxJsonBytes, MaxUtf8Bytes } from './size-validators.js';

const NO_LINE_BREAK = /^[^\r\n]*$/;
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+$/;
const ADDRESS_SCHEMA = {
  oneOf: [
    { type: 'string', format: 'email' },
    { type: 'object', required: ['email'], properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } } },
  ],
};

export class SendAttachmentBody implements MailSendAttachment {
  @ApiProperty({ maxLength: 255, example: 'invoice.pdf' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  @Matches(NO_LINE_BREAK, { message: 'filename must not contain CR or LF' })
  @HasNoNulCharacter()
  filename: string;

  @ApiProperty({ description: 'The file, base64-encoded.' })
  @IsString()
  content: string;

  @ApiPropertyOptional({ example: 'application/pdf', description: 'Default: guessed from the filename.' })
  @IsOptional()
  @IsString()
  @Matches(MIME_TYPE, { message: 'contentType must be a MIME type like application/pdf' })
  contentType?: string;
}

export class SendEmailBody {
  @ApiProperty({
    description: `An address, \`{name, email}\`, or an array of 1 to ${MAX_RECIPIENTS} of either. Duplicates (any letter case) get one email.`,
    oneOf: [...ADDRESS_SCHEMA.oneOf, { type: 'array', items: ADDRESS_SCHEMA }],
  })
  @IsDefined()
  to: MailAddressInput | MailAddressInput[];

  @ApiPropertyOptional({
    maxLength: MAX_SUBJECT_LENGTH,
    description: `Required unless the template gives one. \`{{placeholders}}\` are substituted; rendered for each recipient it must stay within ${MAX_RENDERED_SUBJECT_LENGTH} characters (else 422 \`maxRenderedLength\`).`,
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_SUBJECT_LENGTH)
  @Matches(NO_LINE_BREAK, { message: 'subject must not contain CR or LF' })
  @HasNoNulCharacter()
  subject?: string;

  @ApiPropertyOptional({
    description:
      'HTML, at most 512 KB of UTF-8. Required unless the template gives one. Substituted values are HTML-escaped; rendered ' +
      'for each recipient (escaping included) it must stay within 512 KB too (else 422 `maxRenderedSize`).',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxUtf8Bytes(MAX_BODY_BYTES, '512 KB')
  @HasNoNulCharacter()
  body?: string;

  @ApiPropertyOptional({
    ...ADDRESS_SCHEMA,
    description: 'Sender; its domain must be VERIFIED (else 403). Required unless the template has one.',
  })
  @IsOptional()
  from?: MailAddressInput;

  @ApiPropertyOptional({ maxLength: MAX_NAME_LENGTH, description: "Sender display name; overrides `from.name` and the template's." })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_NAME_LENGTH)
  @Matches(NO_LINE_BREAK, { message: 'name must not contain CR or LF' })
  @HasNoNulCharacter()
  name?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Template id: its subject, body, from, sender name and reply-to apply unless given here.',
  })
  @IsOptional()
  @IsUUID()
  template?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Template variables for `{{name}}`, `{{a.b}}` and `{{ name ?? fallback }}`; `{{email}}` and `{{unsubscribeUrl}}` are always set. ' +
      'At most 64 KB as JSON (else 422 `maxSerializedSize`).',
  })
  @IsOptional()
  @IsObject()
  @MaxJsonBytes(MAX_DATA_BYTES, '64 KB')
  data?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'Subscription of the contacts this send creates (default false). Given, it also updates existing contacts.',
  })
  @IsOptional()
  @IsBoolean()
  subscribed?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `Custom headers (at most ${MAX_HEADERS}); values without CR/LF; structural headers (From, To, Subject, Message-ID, DKIM-Signature, List-Unsubscribe, ...) are refused.`,
  })
  @IsOptional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ format: 'email', description: 'Reply-To address.' })
  @IsOptional()
  @Transform(trimString)
  @IsEmail()
  @MaxLength(MAX_EMAIL_LENGTH)
  reply?: string;

  @ApiPropertyOptional({ type: [SendAttachmentBody], description: `At most ${MAX_ATTACHMENTS} files, 10 MB decoded in total.` })
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => SendAttachmentBody)
  attachments?: SendAttachmentBody[];
}

class SendResultContact {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'email' }) email: string;
}

class SendResultEmail {
  @ApiProperty({ type: SendResultContact }) contact: SendResultContact;
  @ApiProperty({ description: 'The email id (one per recipient).' }) email: string;
}

class SendResultData implements MailSendResult {
  @ApiProperty({ type: [SendResultEmail] }) emails: SendResultEmail[];
  @ApiProperty({ format: 'date-time' }) timestamp: string;
}

export class SendResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: SendResultData }) data: SendResultData;
}
