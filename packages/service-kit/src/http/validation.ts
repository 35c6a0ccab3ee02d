import type { ValidationError, ValidationPipe } from '@nestjs/common';
import { ErrorCode, type FieldError } from '@app/contracts';
import { DomainError } from '../errors/domain-error.js';
import { AppValidationPipe } from './app-validation-pipe.js';
import { memoizeValidationMetadata } from './validation-metadata-cache.js';

/** Flattens class-validator's nested errors into `{field: 'a.b[0].c', message, code}` rows. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? (/^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`) : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([code, message]) => ({ field, message, code }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

/**
 * The global validation pipe: DTOs are whitelisted and transformed; a failure becomes a
 * `VALIDATION_ERROR` DomainError with field details and the app's status (platform 400, mail 422).
 * Nest's pipe, less its per-request overhead on plain input (AppValidationPipe).
 */
export function createValidationPipe(status: 400 | 422): ValidationPipe {
  memoizeValidationMetadata();
  return new AppValidationPipe({
    whitelist: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => {
      const details = flattenValidationErrors(errors);
      const first = details[0];
      const message = first
        ? `validation failed: ${first.field} ${first.message.replace(new RegExp(`^${first.field}\\s*`), '')}`
        : 'validation failed';
      return new DomainError(ErrorCode.ValidationError, message, { status, details });
    },
  });
}
