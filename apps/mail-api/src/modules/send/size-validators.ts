import { registerDecorator } from 'class-validator';

/** Bytes of `value` as UTF-8, counted without copying it (validator.js's isByteLength splits the string into an array). */
function utf8Bytes(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** A string of at most `max` bytes of UTF-8 (error code `maxByteLength`). */
export function MaxUtf8Bytes(max: number, label: string): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'maxByteLength',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || utf8Bytes(value) <= max,
        defaultMessage: (args) => `${args?.property} must be at most ${max} bytes (${label}) of UTF-8`,
      },
    });
}

/**
 * A value whose JSON is at most `max` bytes of UTF-8 (error code `maxSerializedSize`). A value too
 * deeply nested to serialize at all is over any limit.
 */
export function MaxJsonBytes(max: number, label: string): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'maxSerializedSize',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => {
          if (value === undefined) return true;
          try {
            return utf8Bytes(JSON.stringify(value) ?? '') <= max;
          } catch {
            return false;
          }
        },
        defaultMessage: (args) => `${args?.property} must be at most ${max} bytes (${label}) when serialized as JSON`,
      },
    });
}
