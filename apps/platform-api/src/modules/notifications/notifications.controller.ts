import { applyDecorators, Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post, Put, Query, type Type } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { DomainError } from '@app/service-kit';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { NotificationDispatchService } from './notification-dispatch.service.js';
import {
  BatchNotificationDto,
  CreateNotificationDto,
  FeatureNotificationDto,
  ListNotificationsQuery,
  MarkAllReadDto,
  NotificationActionRequestDto,
  NotificationChangedDto,
  NotificationCreatedDto,
  NotificationPageDto,
  NotificationsSentDto,
  RestoreNotificationDto,
  RoleNotificationDto,
  UnreadCountDto,
} from './notifications.dto.js';
import { NotificationsService } from './notifications.service.js';

const NotificationId = () => Param('id', new ParseUUIDPipe({ exceptionFactory: () => DomainError.badRequest('invalid notification id') }));

const SENDER_FIELDS =
  'Fields of every notification: type and severity (`info`, `warning`, `success`, `error`) required; title (default: ' +
  'titleKey, else type), body, titleKey, bodyKey, titleVariables, bodyVariables, icon, actions [{id, label}], sourceModule, ' +
  'sourceEntityType, sourceEntityId, linkHref, groupKey, expiresAt optional. A recipient who already has a notification ' +
  'with the same groupKey that is not dismissed gets no new one. With the tenant’s email strategy on, each new ' +
  'notification is also emailed to its recipient through the mail-api.';

/**
 * A sending route (`POST /notifications[/path]`): needs notifications.create, answers 201 with `created`;
 * 400 for an invalid body, 403 without the feature.
 */
function SendRoute(path: string, doc: { summary: string; description: string }, created: Type<unknown>): MethodDecorator {
  return applyDecorators(
    Post(path),
    RequireFeatures('notifications.create'),
    ApiOperation(doc),
    ApiCreatedResponse({ type: created }),
    ApiBadRequestResponse({ type: ErrorDto }),
    ApiForbiddenResponse({ type: ErrorDto, description: 'Missing notifications.create.' }),
  );
}

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@Controller('notifications')
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly dispatch: NotificationDispatchService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List the caller’s notifications',
    description:
      'Newest first. Dismissed notifications are left out unless `status=dismissed`; expired ones are never listed. ' +
      '`ids` is at most 200 comma-separated UUIDs (400 otherwise); `pageSize` default 50, at most 100.',
  })
  @ApiOkResponse({ type: NotificationPageDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid filter or paging.' })
  list(@CurrentAuth() auth: AuthContext, @Query() query: ListNotificationsQuery) {
    return this.notifications.list(auth, query);
  }

  @SendRoute(
    '',
    {
      summary: 'Notify one user',
      description: `${SENDER_FIELDS} Answers the existing notification’s id when groupKey deduplicated it.`,
    },
    NotificationCreatedDto,
  )
  @ApiNotFoundResponse({ type: ErrorDto, description: 'recipient not found (not a user of the caller’s tenant).' })
  create(@CurrentAuth() auth: AuthContext, @Body() body: CreateNotificationDto) {
    return this.dispatch.create(auth, body);
  }

  @SendRoute(
    'batch',
    {
      summary: 'Notify up to 1000 users',
      description: `${SENDER_FIELDS} Written before the response; count and ids are the notifications written.`,
    },
    NotificationsSentDto,
  )
  @ApiNotFoundResponse({ type: ErrorDto, description: 'Some recipients are not users of the caller’s tenant (none is written).' })
  batch(@CurrentAuth() auth: AuthContext, @Body() body: BatchNotificationDto) {
    return this.dispatch.batch(auth, body);
  }

  @SendRoute(
    'role',
    {
      summary: 'Notify the members of a role',
      description: `${SENDER_FIELDS} A background job resolves the role’s members in the caller’s tenant and writes their notifications; count is the members at request time, ids is empty.`,
    },
    NotificationsSentDto,
  )
  @ApiNotFoundResponse({ type: ErrorDto, description: 'role not found' })
  toRole(@CurrentAuth() auth: AuthContext, @Body() body: RoleNotificationDto) {
    return this.dispatch.toRole(auth, body);
  }

  @SendRoute(
    'feature',
    {
      summary: 'Notify the users holding a feature',
      description: `${SENDER_FIELDS} A background job writes a notification for every user of the caller’s tenant whose resolved access grants requiredFeature (wildcards and super administrators included); count is those users at request time, ids is empty.`,
    },
    NotificationsSentDto,
  )
  toFeature(@CurrentAuth() auth: AuthContext, @Body() body: FeatureNotificationDto) {
    return this.dispatch.toFeature(auth, body);
  }

  @Put('mark-all-read')
  @ApiOperation({ summary: 'Mark all the caller’s unread notifications read', description: 'count: how many went from unread to read.' })
  @ApiOkResponse({ type: MarkAllReadDto })
  markAllRead(@CurrentAuth() auth: AuthContext) {
    return this.notifications.markAllRead(auth);
  }

  @Get('unread-count')
  @ApiOperation({ summary: 'The caller’s unread notifications (not expired)' })
  @ApiOkResponse({ type: UnreadCountDto })
  unreadCount(@CurrentAuth() auth: AuthContext) {
    return this.notifications.unreadCount(auth);
  }

  @Put(':id/read')
  @ApiOperation({
    summary: 'Mark read',
    description: 'unread becomes read (readAt set); other statuses are kept. Another user’s id is 404.',
  })
  @ApiOkResponse({ type: NotificationChangedDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'notification not found' })
  read(@CurrentAuth() auth: AuthContext, @NotificationId() id: string) {
    return this.notifications.read(auth, id);
  }

  @Put(':id/dismiss')
  @ApiOperation({
    summary: 'Dismiss',
    description: 'Dismissed notifications leave the list (see status=dismissed) and free their groupKey.',
  })
  @ApiOkResponse({ type: NotificationChangedDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'notification not found' })
  dismiss(@CurrentAuth() auth: AuthContext, @NotificationId() id: string) {
    return this.notifications.dismiss(auth, id);
  }

  @Put(':id/restore')
  @ApiOperation({
    summary: 'Restore a dismissed notification',
    description:
      'To read (default) or to unread with `{status: "unread"}`. 409 when it is not dismissed, or when another notification with its groupKey is active.',
  })
  @ApiOkResponse({ type: NotificationChangedDto })
  @ApiBadRequestResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'notification not found' })
  @ApiConflictResponse({ type: ErrorDto })
  restore(@CurrentAuth() auth: AuthContext, @NotificationId() id: string, @Body() body: RestoreNotificationDto) {
    return this.notifications.restore(auth, id, body?.status ?? 'read');
  }

  @Post(':id/action')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Take one of the notification’s actions',
    description:
      'Body `{actionId, payload?}`. Claimed once: sets actionTaken and status actioned, and emits ' +
      '`notifications.notification.actioned` for the source module; a second call is 409, as is an action on a dismissed notification.',
  })
  @ApiCreatedResponse({ type: NotificationChangedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'unknown action' })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'notification not found' })
  @ApiConflictResponse({ type: ErrorDto, description: 'action already taken' })
  action(@CurrentAuth() auth: AuthContext, @NotificationId() id: string, @Body() body: NotificationActionRequestDto) {
    return this.notifications.action(auth, id, body);
  }
}
