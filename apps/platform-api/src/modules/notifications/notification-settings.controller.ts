import { Body, Controller, Get, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { NotificationSettingsService } from './notification-settings.service.js';
import { NotificationSettingsResponseDto, NotificationSettingsSavedDto, SaveNotificationSettingsDto } from './notifications.dto.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';

/** The tenant's delivery settings (/notifications/settings). */
@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ReturnsUndoTokens()
@Controller('notifications/settings')
export class NotificationSettingsController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @Get()
  @RequireFeatures('notifications.manage')
  @ApiOperation({
    summary: 'The tenant’s delivery settings',
    description: 'Defaults: database on, email off (from null: PLATFORM_MAIL_FROM, no subject prefix).',
  })
  @ApiOkResponse({ type: NotificationSettingsResponseDto })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing notifications.manage.' })
  getSettings(@CurrentAuth() auth: AuthContext) {
    return this.settings.get(auth);
  }

  @Post()
  @RequireFeatures('notifications.manage')
  @ApiOperation({
    summary: 'Save the tenant’s delivery settings',
    description: 'Body `{strategies: {database?: {enabled}, email?: {enabled, from?, subjectPrefix?}}}`; what is left out keeps its value.',
  })
  @ApiCreatedResponse({ type: NotificationSettingsSavedDto })
  @ApiBadRequestResponse({ type: ErrorDto })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing notifications.manage.' })
  saveSettings(@CurrentAuth() auth: AuthContext, @Body() body: SaveNotificationSettingsDto) {
    return this.settings.save(auth, body);
  }
}
