import { applyDecorators, Controller, UseGuards } from '@nestjs/common';
import { ApiForbiddenResponse, ApiNotFoundResponse, ApiResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { Public } from '../../core/auth/auth.decorators.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { OptionalAuthGuard } from './optional-auth.guard.js';

/**
 * A controller that serves attachments' bytes (`/attachments/file`, `/attachments/image`): its routes
 * are public (a public partition's file needs no session) and still read a session when one is sent
 * (OptionalAuthGuard: the tenant's private files, rate limits by caller).
 */
export function AttachmentServingController(path: string): ClassDecorator {
  return applyDecorators(ApiTags('attachments'), Public(), UseGuards(OptionalAuthGuard), Controller(path));
}

/** The responses every route serving an attachment's bytes shares (conditional GET, a private partition's checks). */
export function ApiServedAttachmentResponses(): MethodDecorator {
  return applyDecorators(
    ApiResponse({ status: 304, description: 'Not modified (If-None-Match).' }),
    ApiUnauthorizedResponse({ type: ErrorDto, description: 'Authentication needed (private partition).' }),
    ApiForbiddenResponse({ type: ErrorDto, description: 'Missing attachments.view (private partition).' }),
    ApiNotFoundResponse({ type: ErrorDto, description: 'attachment not found' }),
  );
}
