import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

export const NOTIFICATION_SEVERITIES = ['info', 'warning', 'success', 'error'] as const;
export const NOTIFICATION_STATUSES = ['unread', 'read', 'actioned', 'dismissed'] as const;
export type NotificationSeverity = (typeof NOTIFICATION_SEVERITIES)[number];
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

export const NOTIFICATIONS_PAGE_SIZE_DEFAULT = 50;
export const NOTIFICATIONS_PAGE_SIZE_MAX = 100;
export const NOTIFICATIONS_IDS_MAX = 200;
export const BATCH_RECIPIENTS_MAX = 1000;
export const NOTIFICATION_ACTIONS_MAX = 10;
/** A relative path (not protocol-relative) or an http(s) URL: never `javascript:` and the like. */
const SAFE_HREF = /^(\/(?!\/)|https?:\/\/)/i;
/** A feature id or wildcard as ACLs hold them: dot-separated segments, `*` allowed. */
const FEATURE_ID = /^[A-Za-z0-9_*:-]+(\.[A-Za-z0-9_*:-]+)*$/;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** `ids=a,b` or `ids=a&ids=b`: one flat list of trimmed, non-empty strings. */
const commaList = ({ value }: { value: unknown }) =>
  (Array.isArray(value) ? (value as unknown[]) : [value])
    .flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
    .map((v) => (typeof v === 'string' ? v.trim() : v))
    .filter((v) => v !== '');

// ---- requests ---------------------------------------------------------------------------------

export class NotificationActionDto {
  @ApiProperty({ maxLength: 100 }) @IsString() @IsNotEmpty() @MaxLength(100) id: string;
  @ApiProperty({ maxLength: 200 }) @IsString() @IsNotEmpty() @MaxLength(200) label: string;
}

/** What a sender may set on a notification (every target endpoint takes these). */
export class NotificationFieldsDto {
  @ApiProperty({ maxLength: 200, example: 'orders.order.assigned' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  type: string;

  @ApiProperty({ enum: NOTIFICATION_SEVERITIES })
  @IsIn(NOTIFICATION_SEVERITIES)
  severity: NotificationSeverity;

  @ApiPropertyOptional({ maxLength: 500, description: 'Omitted: the titleKey, else the type.' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  title?: string;

  @ApiPropertyOptional({ maxLength: 10_000, nullable: true }) @IsOptional() @IsString() @MaxLength(10_000) body?: string | null;
  @ApiPropertyOptional({ maxLength: 200, nullable: true, description: 'i18n key of the title.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  titleKey?: string | null;
  @ApiPropertyOptional({ maxLength: 200, nullable: true, description: 'i18n key of the body.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  bodyKey?: string | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  @IsOptional()
  @IsObject()
  titleVariables?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  @IsOptional()
  @IsObject()
  bodyVariables?: Record<string, unknown> | null;
  @ApiPropertyOptional({ maxLength: 100, nullable: true }) @IsOptional() @IsString() @MaxLength(100) icon?: string | null;

  @ApiPropertyOptional({ type: [NotificationActionDto], maxItems: NOTIFICATION_ACTIONS_MAX, description: 'Action ids are unique.' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(NOTIFICATION_ACTIONS_MAX)
  @ValidateNested({ each: true })
  @Type(() => NotificationActionDto)
  actions?: NotificationActionDto[];

  @ApiPropertyOptional({ maxLength: 200, nullable: true }) @IsOptional() @IsString() @MaxLength(200) sourceModule?: string | null;
  @ApiPropertyOptional({ maxLength: 200, nullable: true }) @IsOptional() @IsString() @MaxLength(200) sourceEntityType?: string | null;
  @ApiPropertyOptional({ maxLength: 200, nullable: true }) @IsOptional() @IsString() @MaxLength(200) sourceEntityId?: string | null;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true, description: 'A path starting with `/`, or an http(s) URL.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @Matches(SAFE_HREF, { message: 'linkHref must be a path starting with / or an http(s) URL' })
  linkHref?: string | null;

  @ApiPropertyOptional({
    maxLength: 200,
    nullable: true,
    description: 'A recipient who already has a notification with this groupKey that is not dismissed gets no new one.',
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  groupKey?: string | null;

  @ApiPropertyOptional({
    format: 'date-time',
    nullable: true,
    description: 'Must be in the future; expired notifications are no longer listed or counted.',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  expiresAt?: string | null;
}

export class CreateNotificationDto extends NotificationFieldsDto {
  @ApiProperty({ format: 'uuid', description: 'A user of the caller’s tenant (404 otherwise).' })
  @IsUUID()
  recipientUserId: string;
}

export class BatchNotificationDto extends NotificationFieldsDto {
  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: BATCH_RECIPIENTS_MAX })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(BATCH_RECIPIENTS_MAX)
  @IsUUID('all', { each: true })
  recipientUserIds: string[];
}

export class RoleNotificationDto extends NotificationFieldsDto {
  @ApiProperty({ format: 'uuid', description: 'A role of the caller’s tenant or a global role (404 otherwise).' })
  @IsUUID()
  roleId: string;
}

export class FeatureNotificationDto extends NotificationFieldsDto {
  @ApiProperty({ maxLength: 128, example: 'sales.orders.approve' })
  @Transform(trim)
  @IsString()
  @MaxLength(128)
  @Matches(FEATURE_ID, { message: 'requiredFeature must be a feature id' })
  requiredFeature: string;
}

export class ListNotificationsQuery {
  @ApiPropertyOptional({ enum: NOTIFICATION_STATUSES, description: 'Omitted: every status but dismissed.' })
  @IsOptional()
  @IsIn(NOTIFICATION_STATUSES)
  status?: NotificationStatus;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) type?: string;
  @ApiPropertyOptional({ enum: NOTIFICATION_SEVERITIES }) @IsOptional() @IsIn(NOTIFICATION_SEVERITIES) severity?: NotificationSeverity;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) sourceEntityType?: string;
  @ApiPropertyOptional({ maxLength: 200 }) @IsOptional() @IsString() @MaxLength(200) sourceEntityId?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Created at or after this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: NOTIFICATIONS_PAGE_SIZE_MAX, default: NOTIFICATIONS_PAGE_SIZE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(NOTIFICATIONS_PAGE_SIZE_MAX)
  pageSize?: number;

  @ApiPropertyOptional({ type: String, description: `Comma-separated UUIDs, at most ${NOTIFICATIONS_IDS_MAX} (400 otherwise).` })
  @IsOptional()
  @Transform(commaList)
  @IsArray()
  @ArrayMaxSize(NOTIFICATIONS_IDS_MAX, { message: `ids accepts at most ${NOTIFICATIONS_IDS_MAX} UUIDs` })
  @IsUUID('all', { each: true, message: 'ids must be comma-separated UUIDs' })
  ids?: string[];
}

export class RestoreNotificationDto {
  @ApiPropertyOptional({ enum: ['read', 'unread'], default: 'read' })
  @IsOptional()
  @IsIn(['read', 'unread'])
  status?: 'read' | 'unread';
}

export class NotificationActionRequestDto {
  @ApiProperty({ maxLength: 100, description: 'One of the notification’s action ids (400 otherwise).' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  actionId: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() payload?: Record<string, unknown>;
}

export class DatabaseStrategyDto {
  @ApiProperty() @IsBoolean() enabled: boolean;
}

export class EmailStrategyDto {
  @ApiProperty() @IsBoolean() enabled: boolean;
  @ApiPropertyOptional({ nullable: true, description: 'Sender address; null: PLATFORM_MAIL_FROM.' })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  from?: string | null;
  @ApiPropertyOptional({ maxLength: 100, description: 'Put before each notification title in the subject.' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  subjectPrefix?: string;
}

export class NotificationStrategiesDto {
  @ApiPropertyOptional({ type: DatabaseStrategyDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DatabaseStrategyDto)
  database?: DatabaseStrategyDto;
  @ApiPropertyOptional({ type: EmailStrategyDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => EmailStrategyDto)
  email?: EmailStrategyDto;
}

export class SaveNotificationSettingsDto {
  @ApiProperty({ type: NotificationStrategiesDto, description: 'Strategies omitted keep their stored value.' })
  @IsObject()
  @ValidateNested()
  @Type(() => NotificationStrategiesDto)
  strategies: NotificationStrategiesDto;
}

// ---- responses --------------------------------------------------------------------------------

export class NotificationItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() type: string;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) body: string | null;
  @ApiProperty({ type: String, nullable: true }) titleKey: string | null;
  @ApiProperty({ type: String, nullable: true }) bodyKey: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) titleVariables: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) bodyVariables: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true }) icon: string | null;
  @ApiProperty({ enum: NOTIFICATION_SEVERITIES }) severity: NotificationSeverity;
  @ApiProperty({ enum: NOTIFICATION_STATUSES }) status: NotificationStatus;
  @ApiProperty({ type: [NotificationActionDto] }) actions: NotificationActionDto[];
  @ApiProperty({ type: String, nullable: true }) sourceModule: string | null;
  @ApiProperty({ type: String, nullable: true }) sourceEntityType: string | null;
  @ApiProperty({ type: String, nullable: true }) sourceEntityId: string | null;
  @ApiProperty({ type: String, nullable: true }) linkHref: string | null;
  @ApiProperty({ type: String, nullable: true }) groupKey: string | null;
  @ApiProperty({ format: 'uuid' }) recipientUserId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) readAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) dismissedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expiresAt: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The action id claimed, once.' }) actionTaken: string | null;
}

export class NotificationPageDto {
  @ApiProperty({ type: [NotificationItemDto] }) items: NotificationItemDto[];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
  @ApiProperty({ type: 'integer' }) totalPages: number;
}

export class NotificationCreatedDto {
  @ApiProperty({ format: 'uuid', description: 'The new notification, or the recipient’s active one with the same groupKey.' })
  id: string;
}

export class NotificationsSentDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({
    type: 'integer',
    description: 'batch: notifications written; role and feature: recipients resolved when the request was taken.',
  })
  count: number;
  @ApiProperty({
    type: [String],
    format: 'uuid',
    description: 'batch: the notifications written; role and feature: [] (written by the fan-out job).',
  })
  ids: string[];
  @ApiProperty({ format: 'uuid', description: 'Identifies the request’s notifications (one per recipient) and its fan-out job.' })
  batchId: string;
}

export class UnreadCountDto {
  @ApiProperty({ type: 'integer' }) unreadCount: number;
}

export class MarkAllReadDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: 'integer', description: 'Notifications that went from unread to read.' }) count: number;
}

export class NotificationChangedDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ type: NotificationItemDto }) notification: NotificationItemDto;
}

class EmailStrategyStateDto {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: String, nullable: true }) from: string | null;
  @ApiProperty() subjectPrefix: string;
}

class StrategiesStateDto {
  @ApiProperty({ type: DatabaseStrategyDto }) database: DatabaseStrategyDto;
  @ApiProperty({ type: EmailStrategyStateDto }) email: EmailStrategyStateDto;
}

class SettingsStateDto {
  @ApiProperty({ type: StrategiesStateDto }) strategies: StrategiesStateDto;
}

export class NotificationSettingsResponseDto {
  @ApiProperty({ type: SettingsStateDto }) settings: SettingsStateDto;
}

export class NotificationSettingsSavedDto extends NotificationSettingsResponseDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
}
