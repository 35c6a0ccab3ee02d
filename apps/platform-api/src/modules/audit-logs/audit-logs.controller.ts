import { Body, Controller, Get, HttpCode, Post, Query, StreamableFile } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import {
  AccessLogPageDto,
  ActionLogPageDto,
  AuditErrorDto,
  ExportActionLogsQuery,
  ListAccessLogsQuery,
  ListActionLogsQuery,
  RedoActionDto,
  RedoResultDto,
  UndoActionDto,
  UndoResultDto,
} from './audit-logs.dto.js';
import { AuditLogsService } from './audit-logs.service.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';

const VISIBILITY =
  'Always the caller’s own tenant (super administrators included). Callers holding `audit_logs.view_tenant` see every ' +
  'entry of the tenant (within their organization restriction, if any) and `canViewTenant` is true; everyone else sees ' +
  'only the entries they made themselves. `actorUserId` naming anyone but the caller needs `audit_logs.view_tenant` ' +
  '(403 otherwise). ';
const PAGING = '`page`/`pageSize` page the result; when neither is given, the legacy `limit`/`offset` do (page = offset / limit + 1). ';

@ApiTags('audit_logs')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: AuditErrorDto, description: 'Not authenticated.' })
@ApiForbiddenResponse({
  type: AuditErrorDto,
  description:
    'Missing feature, another actor named without audit_logs.view_tenant, an organization outside the caller’s access, or (undo, redo) the command’s features or grant boundary no longer met.',
})
@ReturnsUndoTokens()
@Controller('audit_logs/audit-logs')
export class AuditLogsController {
  constructor(private readonly audit: AuditLogsService) {}

  @Get('actions')
  @RequireFeatures('audit_logs.view_self')
  @ApiOperation({
    summary: 'List action log entries',
    description:
      VISIBILITY +
      PAGING +
      'Newest first by default; `sortField` `user` sorts by actor name (else email), `action` by label, `field` by the ' +
      'first changed field; ties are newest first. `undoToken` is only shown on the caller’s own undoable entries made in ' +
      'its current organization context (the ones an undo accepts); `undoableOnly=true` lists exactly those. ' +
      '`includeTotal=false` skips the count (`total`/`totalPages` null, `hasMore` given). An entry whose `context` has ' +
      '`snapshotTenantId` holds only that tenant’s part of the resource in its snapshots and changes (a global role’s ' +
      'ACL and members in the writer’s tenant), never what other tenants hold.',
  })
  @ApiOkResponse({ type: ActionLogPageDto })
  @ApiBadRequestResponse({
    type: AuditErrorDto,
    description: 'Invalid filter values (UUIDs, action types, booleans, ISO 8601 dates, limits).',
  })
  listActions(@CurrentAuth() auth: AuthContext, @Query() query: ListActionLogsQuery) {
    return this.audit.listActions(auth, query);
  }

  @Get('actions/export')
  @RequireFeatures('audit_logs.view_self')
  @ApiOperation({
    summary: 'Export action log entries as CSV',
    description:
      VISIBILITY +
      'Same filters and sort as the list, no paging; `limit` default 1000, larger values are capped at 1000. Columns: ' +
      'When, User, Action, Resource (`kind:id`), Field, Old value, New value, Source; one row per changed field (an entry ' +
      'without changes: one row with empty Field and values); values that are not strings are JSON. A cell that begins ' +
      "with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with a single quote `'` so spreadsheets never " +
      'evaluate it as a formula (OWASP CSV injection). Each export is recorded in the access log (`export`).',
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'CSV attachment `action-logs.csv`.', schema: { type: 'string' } })
  @ApiBadRequestResponse({ type: AuditErrorDto, description: 'Invalid filter values.' })
  async exportActions(@CurrentAuth() auth: AuthContext, @Query() query: ExportActionLogsQuery): Promise<StreamableFile> {
    const { filename, stream } = await this.audit.exportActions(auth, query);
    return new StreamableFile(stream, { type: 'text/csv; charset=utf-8', disposition: `attachment; filename="${filename}"` });
  }

  @Post('actions/undo')
  @HttpCode(200)
  @RequireFeatures('audit_logs.undo_self')
  @ApiOperation({
    summary: 'Undo the caller’s latest action',
    description:
      'The token must be that of the caller’s latest undoable entry in its tenant and organization. The entry is claimed ' +
      'atomically (two concurrent undos of one token apply once), the prior state restored, the entry marked `undone`, ' +
      'and the undo itself recorded as a new entry (source `undo`). 400 for an unknown, foreign or stale token, or when ' +
      'the resource changed since. An undo is a new write: the caller must hold, now, the features of the command it ' +
      'undoes (e.g. `auth.acl.manage` for an ACL write) and stay within the grant boundary (no ACL beyond its own ' +
      'access, no super administrator, no user outside its organizations); 403 (404 for a resource now out of its ' +
      'scope) otherwise, and the entry stays undoable.',
  })
  @ApiOkResponse({ type: UndoResultDto })
  @ApiBadRequestResponse({ type: AuditErrorDto, description: 'Invalid or unavailable undo token.' })
  @ApiNotFoundResponse({ type: AuditErrorDto, description: 'The entry’s resource is now outside the caller’s scope.' })
  undo(@CurrentAuth() auth: AuthContext, @Body() body: UndoActionDto) {
    return this.audit.undo(auth, body.undoToken);
  }

  @Post('actions/redo')
  @HttpCode(200)
  @RequireFeatures('audit_logs.redo_self')
  @ApiOperation({
    summary: 'Redo the caller’s latest undone action',
    description:
      '`logId` must be the caller’s latest `undone` entry in its tenant and organization. The action is re-applied, the ' +
      'entry marked `redone` with a fresh undo token (returned), and the redo recorded as a new entry (source `redo`). ' +
      'Like an undo, it needs the command’s features now and stays within the grant boundary (403, or 404 for a ' +
      'resource now out of the caller’s scope).',
  })
  @ApiOkResponse({ type: RedoResultDto })
  @ApiBadRequestResponse({ type: AuditErrorDto, description: 'Log entry not eligible for redo.' })
  @ApiNotFoundResponse({ type: AuditErrorDto, description: 'The entry’s resource is now outside the caller’s scope.' })
  redo(@CurrentAuth() auth: AuthContext, @Body() body: RedoActionDto) {
    return this.audit.redo(auth, body.logId);
  }

  @Get('access')
  @RequireFeatures('audit_logs.view_self')
  @ApiOperation({
    summary: 'List access log entries',
    description:
      VISIBILITY +
      PAGING +
      'Newest first. Reads of users, roles, role and user ACLs and consents are recorded (`read`, `read:list`), and action ' +
      'log exports (`export`); entries are written in batches within about a quarter of a second of the read. ' +
      '`pageSize` default 50, at most 200.',
  })
  @ApiOkResponse({ type: AccessLogPageDto })
  @ApiBadRequestResponse({ type: AuditErrorDto, description: 'Invalid filters.' })
  listAccess(@CurrentAuth() auth: AuthContext, @Query() query: ListAccessLogsQuery) {
    return this.audit.listAccess(auth, query);
  }
}
