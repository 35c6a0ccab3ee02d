import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsByteLength,
  IsEmail,
  IsIn,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import type { MailList } from '@app/contracts';
import { IdPageQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { HasNoLineBreaks, HasValidPlaceholders } from '../templates/template-validators.js';
import { MAX_BODY_BYTES, MAX_DESCRIPTION, MAX_FROM_NAME, MAX_SUBJECT } from '../templates/templates.dto.js';
import { CONDITION_DESCRIPTION } from '../segments/segments.dto.js';
import { AUDIENCE_TYPES, CAMPAIGN_STATUSES, type AudienceType, type CampaignStatus } from './campaigns.repository.js';
import type { SegmentCondition } from '../segments/segment-condition.js';

export const MAX_CAMPAIGN_NAME = 200;
const MAX_EMAIL = 254;

/** The campaign object (decisions.md "Mail"); `type` repeats `audienceType`, as the spec's samples show. */
export interface MailCampaign {
  id: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string;
  fromName: string | null;
  replyTo: string | null;
  type: AudienceType;
  audienceType: AudienceType;
  segmentId: string | null;
  audienceFilter: SegmentCondition | null;
  status: CampaignStatus;
  scheduledAt: string | null;
  sentAt: string | null;
  totalRecipients: number;
  createdAt: string;
  updatedAt: string;
}

export interface MailCampaignStats {
  totalRecipients: number;
  sentCount: number;
  deliveredCount: number;
  openedCount: number;
  clickedCount: number;
  machineOpenedCount: number;
  machineClickedCount: number;
  bouncedCount: number;
  suppressedCount: number;
  complainedCount: number;
  openRate: number;
  clickRate: number;
  bounceRate: number;
  complaintRate: number;
}

export interface MailCampaignTestResult {
  email: string;
  to: string;
  timestamp: string;
}

const PLACEHOLDERS =
  "Placeholders, rendered per contact: `{{email}}`, `{{unsubscribeUrl}}`, every key of the contact's data as " +
  '`{{key}}` and `{{data.key}}`, and `{{ name ?? fallback }}`; an unknown placeholder renders empty. A malformed ' +
  'placeholder is a 422 `invalidPlaceholder`.';
const FROM_DESCRIPTION = "Sender address; its domain must be one of the project's VERIFIED domains (403 `DOMAIN_NOT_VERIFIED`).";
const upperCase = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

const Rules = {
  name: () => applyDecorators(Transform(trimString), IsString(), Length(1, MAX_CAMPAIGN_NAME), HasNoNulCharacter()),
  subject: () => applyDecorators(IsString(), Length(1, MAX_SUBJECT), HasNoLineBreaks(), HasNoNulCharacter(), HasValidPlaceholders()),
  body: () =>
    applyDecorators(
      IsString(),
      IsByteLength(1, MAX_BODY_BYTES, { message: `body must be 1 to ${MAX_BODY_BYTES} bytes (512 KB) of UTF-8` }),
      HasNoNulCharacter(),
      HasValidPlaceholders(),
    ),
  from: () => applyDecorators(Transform(trimString), IsEmail(), MaxLength(MAX_EMAIL)),
  replyTo: () => applyDecorators(IsOptional(), Transform(trimString), IsEmail(), MaxLength(MAX_EMAIL)),
  fromName: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_FROM_NAME), HasNoLineBreaks(), HasNoNulCharacter()),
  description: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_DESCRIPTION), HasNoNulCharacter()),
  audienceType: () => applyDecorators(Transform(upperCase), IsIn(AUDIENCE_TYPES)),
  segmentId: () => applyDecorators(IsOptional(), IsUUID()),
  audienceFilter: () => applyDecorators(IsOptional(), IsObject()),
};

/** PATCH: an absent field stays; `null` is only accepted by the optional fields (where it clears them). */
const present = (field: string) => ValidateIf((o: Record<string, unknown>) => o[field] !== undefined);

const AUDIENCE_TYPE_DOC = {
  enum: AUDIENCE_TYPES,
  description: "Subscribed contacts only: ALL of them, a stored segment's (`segmentId`), or those matching `audienceFilter`.",
};
const SEGMENT_ID_DOC = { format: 'uuid', nullable: true, description: 'Required when audienceType is SEGMENT, refused otherwise.' };
const FILTER_DOC = {
  type: 'object',
  additionalProperties: true,
  nullable: true,
  description: `A segment condition; required when audienceType is FILTERED, refused otherwise. ${CONDITION_DESCRIPTION}`,
} as const;

export class CreateCampaignBody {
  @ApiProperty({ minLength: 1, maxLength: MAX_CAMPAIGN_NAME }) @Rules.name() name: string;
  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION, nullable: true }) @Rules.description() description?: string | null;
  @ApiProperty({ minLength: 1, maxLength: MAX_SUBJECT, description: `No line breaks. ${PLACEHOLDERS}` }) @Rules.subject() subject: string;
  @ApiProperty({ description: `HTML, at most 512 KB (UTF-8); values are HTML-escaped. ${PLACEHOLDERS}` }) @Rules.body() body: string;
  @ApiProperty({ format: 'email', description: FROM_DESCRIPTION }) @Rules.from() from: string;
  @ApiPropertyOptional({ maxLength: MAX_FROM_NAME, nullable: true, description: 'Sender display name.' }) @Rules.fromName() fromName?:
    string | null;
  @ApiPropertyOptional({ format: 'email', nullable: true }) @Rules.replyTo() replyTo?: string | null;
  @ApiProperty(AUDIENCE_TYPE_DOC) @Rules.audienceType() audienceType: AudienceType;
  @ApiPropertyOptional(SEGMENT_ID_DOC) @Rules.segmentId() segmentId?: string | null;
  @ApiPropertyOptional(FILTER_DOC) @Rules.audienceFilter() audienceFilter?: Record<string, unknown> | null;
}

export class UpdateCampaignBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_CAMPAIGN_NAME }) @present('name') @Rules.name() name?: string;
  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION, nullable: true }) @Rules.description() description?: string | null;
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_SUBJECT, description: PLACEHOLDERS })
  @present('subject')
  @Rules.subject()
  subject?: string;
  @ApiPropertyOptional({ description: `HTML, at most 512 KB. ${PLACEHOLDERS}` }) @present('body') @Rules.body() body?: string;
  @ApiPropertyOptional({ format: 'email', description: FROM_DESCRIPTION }) @present('from') @Rules.from() from?: string;
  @ApiPropertyOptional({ maxLength: MAX_FROM_NAME, nullable: true }) @Rules.fromName() fromName?: string | null;
  @ApiPropertyOptional({ format: 'email', nullable: true }) @Rules.replyTo() replyTo?: string | null;
  @ApiPropertyOptional({ ...AUDIENCE_TYPE_DOC, description: `${AUDIENCE_TYPE_DOC.description} Changing it clears the other kind's field.` })
  @present('audienceType')
  @Rules.audienceType()
  audienceType?: AudienceType;
  @ApiPropertyOptional(SEGMENT_ID_DOC) @Rules.segmentId() segmentId?: string | null;
  @ApiPropertyOptional(FILTER_DOC) @Rules.audienceFilter() audienceFilter?: Record<string, unknown> | null;
}

export class SendCampaignBody {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'A future time schedules the campaign (status SCHEDULED); absent, or a time not in the future, sends now (SENDING).',
  })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  scheduledFor?: string;
}

export class TestCampaignBody {
  @ApiProperty({ format: 'email', maxLength: MAX_EMAIL, description: 'Receives one copy now (subject prefixed `[TEST] `).' })
  @Transform(trimString)
  @IsEmail()
  @MaxLength(MAX_EMAIL)
  email: string;
}

export class ListCampaignsQuery extends IdPageQuery {
  @ApiPropertyOptional({ enum: CAMPAIGN_STATUSES })
  @IsOptional()
  @Transform(upperCase)
  @IsIn(CAMPAIGN_STATUSES)
  status?: CampaignStatus;
}

export class CampaignDto implements MailCampaign {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() subject: string;
  @ApiProperty() body: string;
  @ApiProperty({ format: 'email' }) from: string;
  @ApiProperty({ type: String, nullable: true }) fromName: string | null;
  @ApiProperty({ type: String, format: 'email', nullable: true }) replyTo: string | null;
  @ApiProperty({ enum: AUDIENCE_TYPES, description: 'Equals audienceType.' }) type: AudienceType;
  @ApiProperty({ enum: AUDIENCE_TYPES }) audienceType: AudienceType;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) segmentId: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) audienceFilter: SegmentCondition | null;
  @ApiProperty({
    enum: CAMPAIGN_STATUSES,
    description:
      'DRAFT (new) -> SCHEDULED (send with a future `scheduledFor`) -> SENDING -> SENT (every email finished); ' +
      'SCHEDULED and SENDING can be CANCELLED. Updates from DRAFT or SCHEDULED; delete only a DRAFT.',
  })
  status: CampaignStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) scheduledAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When sending started.' }) sentAt: string | null;
  @ApiProperty({ description: 'Subscribed contacts of the audience when sending started (0 before).' }) totalRecipients: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CampaignResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: CampaignDto }) data: CampaignDto;
}

class CampaignListDto implements MailList<MailCampaign> {
  @ApiProperty({ type: [CampaignDto] }) items: CampaignDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty() total: number;
}

export class CampaignListResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: CampaignListDto }) data: CampaignListDto;
}

class DeletedCampaignDto {
  @ApiProperty({ format: 'uuid' }) id: string;
}

export class DeletedCampaignResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: DeletedCampaignDto }) data: DeletedCampaignDto;
}

class CampaignStatsDto implements MailCampaignStats {
  @ApiProperty() totalRecipients: number;
  @ApiProperty({ description: 'Emails handed to the relay: delivered plus bounced.' }) sentCount: number;
  @ApiProperty({ description: 'Emails the relay accepted (SENT).' }) deliveredCount: number;
  @ApiProperty({ description: "Recipients with a person's open (pixel loaded, or a link followed), each counted once." })
  openedCount: number;
  @ApiProperty({ description: "Recipients with a person's click on a tracked link, each counted once." }) clickedCount: number;
  @ApiProperty({
    description:
      'Recipients with at least one open marked `machine` (HEAD, a listed scanner or proxy user agent, sooner than ' +
      'MAIL_MACHINE_WINDOW_S after delivery), whether or not they also opened themselves.',
  })
  machineOpenedCount: number;
  @ApiProperty({ description: 'Recipients with at least one click marked `machine` (the open rules, and link bursts).' })
  machineClickedCount: number;
  @ApiProperty({ description: 'Emails refused for good: by the relay (SMTP 5xx) or later by a bounce report (DSN).' })
  bouncedCount: number;
  @ApiProperty({ description: 'Recipients on the suppression list when their email was about to be sent: never sent.' })
  suppressedCount: number;
  @ApiProperty({ description: 'Emails a complaint report (ARF) came back for.' }) complainedCount: number;
  @ApiProperty({ description: 'openedCount / deliveredCount, 0 to 1 (0 when nothing was delivered).' }) openRate: number;
  @ApiProperty({ description: 'clickedCount / deliveredCount, 0 to 1.' }) clickRate: number;
  @ApiProperty({ description: 'bouncedCount / sentCount, 0 to 1.' }) bounceRate: number;
  @ApiProperty({ description: 'complainedCount / deliveredCount, 0 to 1.' }) complaintRate: number;
}

export class CampaignStatsResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: CampaignStatsDto }) data: CampaignStatsDto;
}

class CampaignTestDto implements MailCampaignTestResult {
  @ApiProperty({ format: 'uuid', description: 'Id of the queued test email.' }) email: string;
  @ApiProperty({ format: 'email' }) to: string;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
}

export class CampaignTestResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: CampaignTestDto }) data: CampaignTestDto;
}
