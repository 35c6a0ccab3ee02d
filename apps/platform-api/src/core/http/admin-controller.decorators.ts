import { applyDecorators, Controller } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ReturnsUndoTokens } from '../audit/undo-token.js';
import { ErrorDto } from './common.dto.js';

/**
 * A controller of account administration (roles, users, their ACLs and consents): tagged `auth`,
 * bearer-authenticated (the 401 every route can answer), and every write undoable, so each answers
 * with its `X-Undo-Token`. `responses`: what all its routes also document.
 */
export function AuthAdminController(path: string, ...responses: ClassDecorator[]): ClassDecorator {
  return applyDecorators(
    ApiTags('auth'),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' }),
    ...responses,
    ReturnsUndoTokens(),
    Controller(path),
  );
}

type ErrorStatus = 400 | 403 | 404 | 409 | 429;

/** The `{error}` answers a route (or every route of a controller) documents: status to description, '' for none. */
export function ApiErrors(descriptions: Partial<Record<ErrorStatus, string>>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...Object.entries(descriptions).map(([status, description]) =>
      ApiResponse({ status: Number(status), type: ErrorDto, ...(description ? { description } : {}) }),
    ),
  );
}
