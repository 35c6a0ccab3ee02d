import type { Request } from 'express';
import { DomainError } from '@app/service-kit';
import type { AuthenticatedRequest } from './auth.decorators.js';

/**
 * The operator pages of the platform (the queue dashboard) are for super administrators: the one
 * AuthGuard has authenticated the caller (401 without a valid token or cookie); anyone else is 403.
 */
export function superAdministratorsOnly(req: Request): void {
  if (!(req as AuthenticatedRequest).auth?.isSuperAdmin) throw DomainError.forbidden('the queue dashboard is for super administrators');
}
