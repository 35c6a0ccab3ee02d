import { registerDecorator } from 'class-validator';
import { decodeCursor } from './pagination.js';

/** Postgres text and jsonb cannot hold U+0000: such input is a 422, not a failed query. */
export function containsNul(value: string): boolean {
  return value.includes('\u0000');
}

export function HasNoNulCharacter(options: { decodeCursor?: boolean } = {}): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasNoNulCharacter',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !containsNul(options.decodeCursor ? decodeCursor(value) : value),
        defaultMessage: (args) => `${args?.property} must not contain NUL characters`,
      },
    });
}
