import { registerDecorator, type ValidationArguments } from 'class-validator';
import { placeholderProblems } from './template-rendering.js';

/** Problems shown per field in the 422 message; the rest would only repeat the pattern. */
const PROBLEMS_IN_MESSAGE = 3;

/**
 * `{{...}}` placeholders must be well formed (template-rendering.ts): a typo in a template should fail
 * when it is saved, not render silently wrong in every email sent from it. Error code
 * `invalidPlaceholder`, the message lists the first problems with their line and column.
 */
export function HasValidPlaceholders(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'invalidPlaceholder',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || placeholderProblems(value).length === 0,
        defaultMessage: (args?: ValidationArguments) => {
          const problems = placeholderProblems(String(args?.value ?? ''));
          return `${args?.property} has ${problems.length === 1 ? 'an invalid placeholder' : 'invalid placeholders'}: ${problems.slice(0, PROBLEMS_IN_MESSAGE).join('; ')}`;
        },
      },
    });
}

/** Header values (subject, display name): a CR or LF would let the value inject other headers. */
export function HasNoLineBreaks(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasNoLineBreaks',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !/[\r\n]/.test(value),
        defaultMessage: (args?: ValidationArguments) => `${args?.property} must not contain line breaks (CR or LF)`,
      },
    });
}
