import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsByteLength, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import type { MailList, MailTemplate, MailTemplateType } from '@app/contracts';
import { IdPageQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { HasNoLineBreaks, HasValidPlaceholders } from './template-validators.js';

export const TEMPLATE_TYPES: MailTemplateType[] = ['TRANSACTIONAL', 'MARKETING'];
export const MAX_TEMPLATE_NAME = 200;
/** RFC 5322 caps a header line at 998 characters. */
export const MAX_SUBJECT = 998;
export const MAX_BODY_BYTES = 512 * 1024;
export const MAX_FROM_NAME = 200;
export const MAX_DESCRIPTION = 2000;
const MAX_EMAIL = 254;

const PLACEHOLDERS =
  'Placeholders: `{{name}}`, `{{ user.firstName }}`, `{{ name ?? fallback }}` (fallback optionally quoted); ' +
  'names are letters, digits, `_` and `-`, dots between segments. A malformed placeholder is a 422 `invalidPlaceholder`.';
const FROM_DESCRIPTION =
  'Sender address. Not checked against your domains when the template is saved: sending from the template ' +
  'requires its domain to be VERIFIED (403 `DOMAIN_NOT_VERIFIED` otherwise), and a domain a template sends ' +
  'from cannot be deleted.';

/** Each field's rules, shared by create and update (update only adds "may be absent"). */
const Rules = {
  name: () => applyDecorators(Transform(trimString), IsString(), Length(1, MAX_TEMPLATE_NAME), HasNoNulCharacter()),
  subject: () => applyDecorators(IsString(), Length(1, MAX_SUBJECT), HasNoLineBreaks(), HasNoNulCharacter(), HasValidPlaceholders()),
  body: () =>
    applyDecorators(
      IsString(),
      IsByteLength(1, MAX_BODY_BYTES, { message: `body must be 1 to ${MAX_BODY_BYTES} bytes (512 KB) of UTF-8` }),
      HasNoNulCharacter(),
      HasValidPlaceholders(),
    ),
  email: () => applyDecorators(IsOptional(), Transform(trimString), IsEmail(), MaxLength(MAX_EMAIL)),
  fromName: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_FROM_NAME), HasNoLineBreaks(), HasNoNulCharacter()),
  type: () => IsIn(TEMPLATE_TYPES),
  description: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_DESCRIPTION), HasNoNulCharacter()),
};

/** PATCH: an absent field stays; `null` is only accepted by the optional fields (where it clears them). */
const present = (field: string) => ValidateIf((o: Record<string, unknown>) => o[field] !== undefined);

export class CreateTemplateBody {
  @ApiProperty({ minLength: 1, maxLength: MAX_TEMPLATE_NAME, description: 'Trimmed.' })
  @Rules.name()
  name: string;

  @ApiProperty({ minLength: 1, maxLength: MAX_SUBJECT, description: `No line breaks. ${PLACEHOLDERS}` })
  @Rules.subject()
  subject: string;

  @ApiProperty({ description: `HTML, at most 512 KB (UTF-8). ${PLACEHOLDERS} Values are HTML-escaped when rendered.` })
  @Rules.body()
  body: string;

  @ApiPropertyOptional({ format: 'email', nullable: true, description: FROM_DESCRIPTION })
  @Rules.email()
  from?: string | null;

  @ApiPropertyOptional({ maxLength: MAX_FROM_NAME, nullable: true, description: 'Sender display name; no line breaks.' })
  @Rules.fromName()
  fromName?: string | null;

  @ApiPropertyOptional({ format: 'email', nullable: true })
  @Rules.email()
  replyTo?: string | null;

  @ApiPropertyOptional({ enum: TEMPLATE_TYPES, default: 'TRANSACTIONAL' })
  @IsOptional()
  @Rules.type()
  type?: MailTemplateType;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION, nullable: true })
  @Rules.description()
  description?: string | null;
}

export class UpdateTemplateBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_TEMPLATE_NAME })
  @present('name')
  @Rules.name()
  name?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_SUBJECT, description: PLACEHOLDERS })
  @present('subject')
  @Rules.subject()
  subject?: string;

  @ApiPropertyOptional({ description: `HTML, at most 512 KB. ${PLACEHOLDERS}` })
  @present('body')
  @Rules.body()
  body?: string;

  @ApiPropertyOptional({ format: 'email', nullable: true, description: `${FROM_DESCRIPTION} \`null\` clears it.` })
  @Rules.email()
  from?: string | null;

  @ApiPropertyOptional({ maxLength: MAX_FROM_NAME, nullable: true, description: '`null` clears it.' })
  @Rules.fromName()
  fromName?: string | null;

  @ApiPropertyOptional({ format: 'email', nullable: true, description: '`null` clears it.' })
  @Rules.email()
  replyTo?: string | null;

  @ApiPropertyOptional({ enum: TEMPLATE_TYPES })
  @present('type')
  @Rules.type()
  type?: MailTemplateType;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION, nullable: true, description: '`null` clears it.' })
  @Rules.description()
  description?: string | null;
}

export class ListTemplatesQuery extends IdPageQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name.', maxLength: MAX_TEMPLATE_NAME })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(MAX_TEMPLATE_NAME)
  @HasNoNulCharacter()
  search?: string;

  @ApiPropertyOptional({ enum: TEMPLATE_TYPES })
  @IsOptional()
  @IsIn(TEMPLATE_TYPES)
  type?: MailTemplateType;
}

export class TemplateResponse implements MailTemplate {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() subject: string;
  @ApiProperty() body: string;
  @ApiProperty({ type: String, format: 'email', nullable: true }) from: string | null;
  @ApiProperty({ type: String, nullable: true }) fromName: string | null;
  @ApiProperty({ type: String, format: 'email', nullable: true }) replyTo: string | null;
  @ApiProperty({ enum: TEMPLATE_TYPES }) type: MailTemplateType;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class TemplateListResponse implements MailList<MailTemplate> {
  @ApiProperty({ type: [TemplateResponse] }) items: TemplateResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Templates matching the filters, over all pages.' }) total: number;
}
