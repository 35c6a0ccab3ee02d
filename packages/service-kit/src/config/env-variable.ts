import { Expose, plainToInstance } from 'class-transformer';

/** What `@EnvVar` records about one variable of a config schema. */
interface EnvVariableDeclaration {
  name: string;
  meaning: string;
  /** Shown instead of the schema's default when that one is computed at start (a path, another variable). */
  shownDefault?: string;
}

/** One row of the configuration reference (`npm run docs:config` writes docs/configuration.md from these). */
export interface EnvVariableReference {
  name: string;
  /** Markdown: `` `3000` ``, or the declared text, or `unset`. */
  default: string;
  meaning: string;
}

type ConfigSchema = new () => object;

const declarations = new WeakMap<object, EnvVariableDeclaration[]>();

/**
 * Declares an environment variable of a config schema: `loadConfig` reads it (this is its `@Expose()`),
 * and `meaning` (Markdown, one line) is its row in docs/configuration.md, so code and docs cannot drift.
 * `options.default` is for a default the schema cannot state as a value (computed at start, or derived
 * from another variable); otherwise the reference shows the property's initial value, or `unset`.
 */
export function EnvVar(meaning: string, options: { default?: string } = {}): PropertyDecorator {
  const expose = Expose();
  return (target, key) => {
    expose(target, key);
    const list = declarations.get(target.constructor) ?? [];
    list.push({ name: String(key), meaning, shownDefault: options.default });
    declarations.set(target.constructor, list);
  };
}

/**
 * Every variable of a config schema with its default and meaning, in declaration order. Throws when a
 * variable the schema reads (exposed to `loadConfig`) was declared without `@EnvVar`.
 */
export function describeConfig(schema: ConfigSchema): EnvVariableReference[] {
  const declared = declarations.get(schema) ?? [];
  const names = new Set(declared.map((d) => d.name));
  const read = Object.keys(plainToInstance(schema, {}, { excludeExtraneousValues: true }));
  const undescribed = read.filter((name) => !names.has(name));
  if (undescribed.length > 0) {
    throw new Error(`${schema.name}: declare ${undescribed.join(', ')} with @EnvVar('meaning'), not a bare @Expose()`);
  }
  const defaults = new schema() as Record<string, unknown>;
  return declared.map(({ name, meaning, shownDefault }) => ({
    name,
    default: shownDefault ?? shownValue(schema.name, name, defaults[name]),
    meaning,
  }));
}

/** A schema default as the reference shows it: `unset`, or the value in backticks. */
function shownValue(schema: string, name: string, value: unknown): string {
  if (value === undefined) return 'unset';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `\`${String(value)}\``;
  throw new Error(`${schema}.${name}: state its default for the reference with @EnvVar('meaning', { default: '...' })`);
}
