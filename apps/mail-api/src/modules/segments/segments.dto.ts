import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import type { MailList } from '@app/contracts';
import { IdPageQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { ContactResponse, MAX_EMAIL_LENGTH } from '../contacts/contacts.dto.js';
import { SEGMENT_OPERATORS, SEGMENT_UNITS, type SegmentCondition } from './segment-condition.js';
import type { SegmentType } from './segments.repository.js';

export const SEGMENT_TYPES: SegmentType[] = ['DYNAMIC', 'STATIC'];
export const MAX_SEGMENT_NAME = 200;
export const MAX_SEGMENT_DESCRIPTION = 2000;
export const MAX_MEMBER_EMAILS = 1000;

/** A segment as the API answers it. */
export interface MailSegment {
  id: string;
  name: string;
  description: string | null;
  type: SegmentType;
  condition: SegmentCondition | null;
  memberCount: number;
  createdAt: string;
  updatedAt: string;
}

export const CONDITION_DESCRIPTION =
  '`{logic: "AND"|"OR", groups: [{filters: [{field, operator, value?, unit?}]}]}`: the filters of a group are ANDed, ' +
  'the groups joined by `logic`; at most 20 groups of at most 20 filters, strings at most 1000 characters. Fields and ' +
  'their operators: `email` (equals, notEquals: case-insensitive; contains, notContains: case-insensitive substring); ' +
  '`subscribed` (equals, notEquals; boolean value); `createdAt` (gt, gte, lt, lte: ISO 8601 date or date-time, UTC ' +
  'when no offset; within, olderThan); `data.<key>` (equals, notEquals: string, number or boolean, numbers compared ' +
  'numerically; contains, notContains: case-insensitive substring; gt, gte, lt, lte: a number compares with numbers, ' +
  'an ISO date with date values, other strings as text; exists, notExists; within, olderThan on date values); ' +
  '`event.<name>` (triggered, notTriggered, triggeredWithin; `email.sent`, `email.opened`, `email.clicked`, ' +
  "`email.bounced` are recorded by campaigns); `campaign.<campaignId>` (received: the campaign's email was delivered; " +
  'opened, clicked: by a person, machine opens and clicks do not count; notOpened, notClicked: received and not ' +
  "that, so a follow-up to non-openers is one filter; another project's or an unknown campaign id selects nobody). " +
  '`within`, `olderThan` and `triggeredWithin` take `value` (a number ' +
  '> 0) and `unit` (minutes, hours, days). Negations (notEquals, notContains, notExists) include contacts without ' +
  'the key. Any other field, operator, pairing or value is a 422 naming the path (`condition.groups[0].filters[1].operator`).';

/** `dynamic`, `Static`...: any letter case in, uppercase out. */
const upperCase = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.toUpperCase() : value);

/** Each string of an array trimmed; anything else left for the validators to judge. */
const trimEach = ({ value }: { value: unknown }): unknown =>
  Array.isArray(value) ? (value as unknown[]).map((v) => (typeof v === 'string' ? v.trim() : v)) : value;

const Rules = {
  name: () => applyDecorators(Transform(trimString), IsString(), Length(1, MAX_SEGMENT_NAME), HasNoNulCharacter()),
  description: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_SEGMENT_DESCRIPTION), HasNoNulCharacter()),
  type: () => applyDecorators(Transform(upperCase), IsIn(SEGMENT_TYPES, { message: 'type must be DYNAMIC or STATIC (any letter case)' })),
};

/** OpenAPI shapes of a condition (documentation only: the service validates with `validateCondition`). */
class SegmentFilterDoc {
  @ApiProperty({ example: 'data.plan', description: 'email, subscribed, createdAt, data.<key>, event.<name> or campaign.<campaignId>' })
  field: string;
  @ApiProperty({ enum: SEGMENT_OPERATORS }) operator: string;
  @ApiPropertyOptional({
    description:
      'A string, number or boolean, per operator; absent for exists, notExists, triggered, notTriggered and the campaign operators.',
  })
  value?: unknown;
  @ApiPropertyOptional({ enum: SEGMENT_UNITS, description: 'With within, olderThan and triggeredWithin.' }) unit?: string;
}

class SegmentGroupDoc {
  @ApiProperty({ type: [SegmentFilterDoc], minItems: 1, maxItems: 20, description: 'ANDed.' }) filters: SegmentFilterDoc[];
}

export class SegmentConditionDoc {
  @ApiProperty({ enum: ['AND', 'OR'], description: 'How the groups are joined.' }) logic: string;
  @ApiProperty({ type: [SegmentGroupDoc], minItems: 1, maxItems: 20 }) groups: SegmentGroupDoc[];
}

const conditionSchema = { type: SegmentConditionDoc, nullable: true };

export class CreateSegmentBody {
  @ApiProperty({ minLength: 1, maxLength: MAX_SEGMENT_NAME, description: 'Trimmed.' })
  @Rules.name()
  name: string;

  @ApiPropertyOptional({ maxLength: MAX_SEGMENT_DESCRIPTION, nullable: true })
  @Rules.description()
  description?: string | null;

  @ApiProperty({ enum: SEGMENT_TYPES, description: 'Any letter case; answered uppercase.' })
  @Rules.type()
  type: SegmentType;

  /** Checked by the service with `validateCondition` (field errors under `condition.`). */
  @ApiPropertyOptional({ ...conditionSchema, description: `Required for DYNAMIC, refused for STATIC. ${CONDITION_DESCRIPTION}` })
  @IsOptional()
  condition?: unknown;
}

export class UpdateSegmentBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_SEGMENT_NAME })
  @ValidateIf((o: Record<string, unknown>) => o.name !== undefined)
  @Rules.name()
  name?: string;

  @ApiPropertyOptional({ maxLength: MAX_SEGMENT_DESCRIPTION, nullable: true, description: '`null` clears it.' })
  @Rules.description()
  description?: string | null;

  @ApiPropertyOptional({ enum: SEGMENT_TYPES, description: 'A segment keeps its type: only its current type is accepted.' })
  @IsOptional()
  @Rules.type()
  type?: SegmentType;

  @ApiPropertyOptional({ ...conditionSchema, description: `DYNAMIC segments only; replaces the condition. ${CONDITION_DESCRIPTION}` })
  @IsOptional()
  condition?: unknown;
}

export class ListSegmentsQuery extends IdPageQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name.', maxLength: MAX_SEGMENT_NAME })
  @IsOptional()
  @Transform(trimString)
  @IsString()
  @MaxLength(MAX_SEGMENT_NAME)
  @HasNoNulCharacter()
  search?: string;

  @ApiPropertyOptional({ enum: SEGMENT_TYPES, description: 'Any letter case.' })
  @IsOptional()
  @Rules.type()
  type?: SegmentType;
}

export class SegmentMembersBody {
  @ApiProperty({
    type: [String],
    format: 'email',
    minItems: 1,
    maxItems: MAX_MEMBER_EMAILS,
    description: 'Matched case-insensitively; duplicates count once.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MEMBER_EMAILS)
  @Transform(trimEach)
  @IsEmail({}, { each: true })
  @MaxLength(MAX_EMAIL_LENGTH, { each: true })
  emails: string[];
}

export class SegmentResponse implements MailSegment {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: SEGMENT_TYPES }) type: SegmentType;
  @ApiProperty({ ...conditionSchema, description: 'The DYNAMIC condition; null for STATIC.' }) condition: SegmentCondition | null;
  @ApiProperty({ description: 'Contacts in the segment now (subscribed or not), counted live.' }) memberCount: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class SegmentListResponse implements MailList<MailSegment> {
  @ApiProperty({ type: [SegmentResponse] }) items: SegmentResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Segments matching the filters, over all pages.' }) total: number;
}

export class SegmentMemberListResponse implements MailList<ContactResponse> {
  @ApiProperty({ type: [ContactResponse], description: 'Contact objects, as GET /contacts returns them.' }) items: ContactResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Members over all pages (the memberCount).' }) total: number;
}

export class MembersAddedResponse {
  @ApiProperty({ description: 'Contacts that were not members before.' }) added: number;
}

export class MembersRemovedResponse {
  @ApiProperty({ description: 'Contacts that were members and are no longer.' }) removed: number;
}
