import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';

/** platform-api.md "Limits". */
export const ACTIONS_LIMIT_DEFAULT = 50;
export const ACTIONS_LIMIT_MAX = 1000;
export const LOG_PAGE_SIZE_DEFAULT = 50;
export const LOG_PAGE_SIZE_MAX = 200;
export const EXPORT_LIMIT_MAX = 1000;
export const LOG_PAGE_MAX = 1_000_000;
export const LOG_OFFSET_MAX = 100_000_000;
const LIST_ITEMS_MAX = 100;

export const ACTION_TYPES = ['create', 'edit', 'delete', 'assign'] as const;
export const ACTION_SORT_FIELDS = ['createdAt', 'user', 'action', 'field', 'source'] as const;
export type ActionSortField = (typeof ACTION_SORT_FIELDS)[number];
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;

/** `a,b` and repeated parameters (`?x=a&x=b`) alike become `['a', 'b']`; blanks are dropped. */
const commaList = ({ value }: { value: unknown }) => {
  if (value === undefined || value === null) return value;
  return (Array.isArray(value) ? (value as unknown[]) : [value])
    .flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]))
    .map((v) => (typeof v === 'string' ? v.trim() : v))
    .filter((v) => v !== '');
};

/** `true`/`1` and `false`/`0`; anything else stays a string and fails `@IsBoolean` (400). */
const booleanParam = ({ value }: { value: unknown }) => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return value;
};

const ISO = { strict: true, strictSeparator: true };

/** An optional integer query parameter: documented as `doc` says, 400 outside [min, max] (no max: unbounded). */
function OptionalInt(bounds: { min: number; max?: number }, doc: ApiPropertyOptions): PropertyDecorator {
  const max = bounds.max === undefined ? [] : [Max(bounds.max)];
  return applyDecorators(
    ApiPropertyOptional(doc),
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(bounds.min),
    ...max,
  );
}

/** An optional ISO 8601 instant (date and time, `T` separator). */
function OptionalInstant(doc: ApiPropertyOptions): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional(doc), IsOptional(), IsISO8601(ISO));
}

/** `page` and `pageSize` of both log lists. */
const PageParam = () => OptionalInt({ min: 1, max: LOG_PAGE_MAX }, { minimum: 1, maximum: LOG_PAGE_MAX, default: 1 });
const PageSizeParam = () =>
  OptionalInt(
    { min: 1, max: LOG_PAGE_SIZE_MAX },
    { minimum: 1, maximum: LOG_PAGE_SIZE_MAX, default: LOG_PAGE_SIZE_DEFAULT, description: 'Above 200 is 400.' },
  );

// ---- requests ---------------------------------------------------------------------------------

/** The filters the action list and the CSV export share. */
export class ActionLogFilterQuery {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Only entries recorded in this organization (403 outside the caller’s organization restriction).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;

  @ApiPropertyOptional({
    type: String,
    description:
      'One UUID or a comma-separated list. Tenant administrators (`audit_logs.view_tenant`) only: anyone else naming ' +
      'another actor than themselves gets 403.',
    example: '5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e,0d1c2b3a-9a7e-4c3b-8f2d-5b6c9a8e1f2d',
  })
  @IsOptional()
  @Transform(commaList)
  @ArrayMaxSize(LIST_ITEMS_MAX)
  @IsUUID(undefined, { each: true })
  actorUserId?: string[];

  @ApiPropertyOptional({ maxLength: 100, example: 'auth.role' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  resourceKind?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  resourceId?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'One of `create`, `edit`, `delete`, `assign`, or a comma-separated list.',
    example: 'create,delete',
  })
  @IsOptional()
  @Transform(commaList)
  @ArrayMaxSize(ACTION_TYPES.length)
  @IsIn(ACTION_TYPES, { each: true })
  actionType?: string[];

  @ApiPropertyOptional({
    type: String,
    description: 'Entries that changed any of these fields (one name or a comma-separated list).',
    example: 'name,acls',
  })
  @IsOptional()
  @Transform(commaList)
  @ArrayMaxSize(LIST_ITEMS_MAX)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  fieldName?: string[];

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'With `resourceId`: also the entries of child entities whose parentResourceId is it (and whose parentResourceKind ' +
      'is `resourceKind`, when given). Ignored without `resourceId`.',
  })
  @IsOptional()
  @Transform(booleanParam)
  @IsBoolean()
  includeRelated?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Only entries the caller can undo: its own, made in its current organization context, that still carry an undo token (state `done` or `redone`); for tenant viewers too, so every listed entry has its `undoToken`.',
  })
  @IsOptional()
  @Transform(booleanParam)
  @IsBoolean()
  undoableOnly?: boolean;

  @ApiPropertyOptional({
    enum: ACTION_SORT_FIELDS,
    default: 'createdAt',
    description: '`user`: actor name (else email); `action`: action label; `field`: first changed field. Ties: newest first.',
  })
  @IsOptional()
  @IsIn(ACTION_SORT_FIELDS)
  sortField?: ActionSortField;

  @ApiPropertyOptional({ enum: SORT_DIRECTIONS, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_DIRECTIONS)
  sortDir?: 'asc' | 'desc';

  @OptionalInstant({ description: 'ISO 8601; entries created strictly before this instant.', example: '2025-11-22T00:00:00Z' })
  before?: string;

  @OptionalInstant({ description: 'ISO 8601; entries created at or after this instant.', example: '2025-11-01T00:00:00Z' })
  after?: string;
}

export class ListActionLogsQuery extends ActionLogFilterQuery {
  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description: 'false skips counting: `total` and `totalPages` are null and `hasMore` tells whether a next page exists.',
  })
  @IsOptional()
  @Transform(booleanParam)
  @IsBoolean()
  includeTotal?: boolean;

  @OptionalInt(
    { min: 1, max: ACTIONS_LIMIT_MAX },
    {
      minimum: 1,
      maximum: ACTIONS_LIMIT_MAX,
      default: ACTIONS_LIMIT_DEFAULT,
      description: 'Legacy paging with `offset`; ignored when `page` or `pageSize` is given. Above 1000 is 400.',
    },
  )
  limit?: number;

  @OptionalInt({ min: 0, max: LOG_OFFSET_MAX }, { minimum: 0, default: 0, description: 'Legacy: entries to skip, with `limit`.' })
  offset?: number;

  @PageParam()
  page?: number;

  @PageSizeParam()
  pageSize?: number;
}

export class ExportActionLogsQuery extends ActionLogFilterQuery {
  @OptionalInt(
    { min: 1 },
    { minimum: 1, default: EXPORT_LIMIT_MAX, description: 'Entries exported (newest first by default); capped at 1000.' },
  )
  limit?: number;
}

export class ListAccessLogsQuery {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Only reads made in this organization (403 outside the caller’s organization restriction).',
  })
  @IsOptional()
  @IsUUID()
  organizationId?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'One UUID or a comma-separated list; tenant administrators only (403 for anyone else naming another actor).',
  })
  @IsOptional()
  @Transform(commaList)
  @ArrayMaxSize(LIST_ITEMS_MAX)
  @IsUUID(undefined, { each: true })
  actorUserId?: string[];

  @ApiPropertyOptional({ maxLength: 100, example: 'auth.user' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  resourceKind?: string;

  @ApiPropertyOptional({ maxLength: 50, description: '`read`, `read:list` or `export`.', example: 'read:list' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(50)
  accessType?: string;

  @PageParam()
  page?: number;

  @PageSizeParam()
  pageSize?: number;

  @OptionalInt(
    { min: 1, max: ACTIONS_LIMIT_MAX },
    { minimum: 1, maximum: ACTIONS_LIMIT_MAX, description: 'Legacy paging with `offset`; ignored when `page` or `pageSize` is given.' },
  )
  limit?: number;

  @OptionalInt({ min: 0, max: LOG_OFFSET_MAX }, { minimum: 0, default: 0 })
  offset?: number;

  @OptionalInstant({ description: 'ISO 8601; reads strictly before this instant.' })
  before?: string;

  @OptionalInstant({ description: 'ISO 8601; reads at or after this instant.' })
  after?: string;
}

export class UndoActionDto {
  @ApiProperty({ description: 'The `X-Undo-Token` of the caller’s latest undoable entry.', maxLength: 200 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  undoToken: string;
}

export class RedoActionDto {
  @ApiProperty({ format: 'uuid', description: 'Id of the caller’s latest undone entry.' })
  @IsUUID()
  logId: string;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

const NULLABLE_STRING = { type: String, nullable: true } as const;
const NULLABLE_OBJECT = { type: 'object', nullable: true, additionalProperties: true } as const;

export class ActionLogEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'auth.roles.update' }) commandId: string;
  @ApiProperty(NULLABLE_STRING) actionLabel: string | null;
  @ApiProperty({ enum: ACTION_TYPES }) actionType: string;
  @ApiProperty({ enum: ['done', 'undoing', 'undone', 'failed', 'redone'] }) executionState: string;
  @ApiProperty({ enum: ['api', 'undo', 'redo'], description: '`undo`/`redo`: the entry records an undo or redo of another entry.' })
  source: string;
  @ApiProperty(NULLABLE_STRING) actorUserId: string | null;
  @ApiProperty({ ...NULLABLE_STRING, description: 'The actor’s name, else its email.' }) actorUserName: string | null;
  @ApiProperty(NULLABLE_STRING) tenantId: string | null;
  @ApiProperty(NULLABLE_STRING) tenantName: string | null;
  @ApiProperty(NULLABLE_STRING) organizationId: string | null;
  @ApiProperty(NULLABLE_STRING) organizationName: string | null;
  @ApiProperty(NULLABLE_STRING) resourceKind: string | null;
  @ApiProperty(NULLABLE_STRING) resourceId: string | null;
  @ApiProperty(NULLABLE_STRING) parentResourceKind: string | null;
  @ApiProperty(NULLABLE_STRING) parentResourceId: string | null;
  @ApiProperty({ ...NULLABLE_STRING, description: 'Only on the caller’s own entries that can still be undone; null otherwise.' })
  undoToken: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty(NULLABLE_OBJECT) snapshotBefore: Record<string, unknown> | null;
  @ApiProperty(NULLABLE_OBJECT) snapshotAfter: Record<string, unknown> | null;
  @ApiProperty({ ...NULLABLE_OBJECT, description: '`{field: {from, to}}`' }) changes: Record<string, { from: unknown; to: unknown }> | null;
  @ApiProperty(NULLABLE_OBJECT) context: Record<string, unknown> | null;
}

export class AccessLogEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() resourceKind: string;
  @ApiProperty(NULLABLE_STRING) resourceId: string | null;
  @ApiProperty({ example: 'read:list' }) accessType: string;
  @ApiProperty(NULLABLE_STRING) actorUserId: string | null;
  @ApiProperty(NULLABLE_STRING) actorUserName: string | null;
  @ApiProperty(NULLABLE_STRING) tenantId: string | null;
  @ApiProperty(NULLABLE_STRING) tenantName: string | null;
  @ApiProperty(NULLABLE_STRING) organizationId: string | null;
  @ApiProperty(NULLABLE_STRING) organizationName: string | null;
  @ApiProperty({ type: [String] }) fields: string[];
  @ApiProperty(NULLABLE_OBJECT) context: Record<string, unknown> | null;
  @ApiProperty() createdAt: string;
}

class PagedLogDto {
  @ApiProperty({ description: 'True when the caller sees the whole tenant (`audit_logs.view_tenant`), false: only its own entries.' })
  canViewTenant: boolean;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when `includeTotal=false`.' }) total: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when `includeTotal=false`.' }) totalPages: number | null;
  @ApiPropertyOptional({ description: 'Only when `includeTotal=false`: whether a next page exists.' }) hasMore?: boolean;
}

export class ActionLogPageDto extends PagedLogDto {
  @ApiProperty({ type: [ActionLogEntryDto] }) items: ActionLogEntryDto[];
}

export class AccessLogPageDto extends PagedLogDto {
  @ApiProperty({ type: [AccessLogEntryDto] }) items: AccessLogEntryDto[];
}

export class UndoResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiProperty({ format: 'uuid', description: 'The entry that was undone.' }) logId: string;
}

export class RedoResultDto extends UndoResultDto {
  @ApiProperty({ description: 'A fresh undo token for the re-applied entry.' }) undoToken: string;
}

export class AuditErrorDto {
  @ApiProperty() error: string;
}
