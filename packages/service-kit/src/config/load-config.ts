import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

/** Raised when the environment does not satisfy an app's config schema; the message lists every problem. */
export class ConfigError extends Error {}

/**
 * Turns `process.env` into a typed, validated config object. Defaults live on the schema class
 * (property initialisers), conversions come from class-transformer decorators.
 */
export function loadConfig<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const present: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') present[key] = value;
  }
  const config = plainToInstance(schema, present, { exposeDefaultValues: true, excludeExtraneousValues: true });
  const errors = validateSync(config, { whitelist: false });
  if (errors.length > 0) {
    throw new ConfigError(`invalid configuration: ${describe(errors).join('; ')}`);
  }
  return config;
}

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((e) => Object.values(e.constraints ?? {}).map((msg) => `${e.property}: ${msg}`));
}
