import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FuzzOperation, FuzzResponse, OpenApiDocument } from './openapi-fuzz.js';

// ajv-formats is CommonJS: under ESM its default import is the module object, the plugin its `default`.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

/**
 * Checks a 2xx body against the schema the operation documents for that status (ajv, the document's
 * components as the $ref target). Answers the problem, or null when the body fits. A 2xx status the
 * operation does not document at all is a problem too: the document would be lying about the route.
 * Exactly: an object schema that lists its properties admits no other field (@nestjs/swagger writes no
 * `additionalProperties`, which JSON Schema reads as "anything else goes"), so a field the document does
 * not name fails as a wrong type does.
 */
export class ResponseSchemas {
  private readonly ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Operations whose 2xx answers were checked against a schema, and those with nothing to check against. */
  readonly checked = new Set<string>();
  readonly unchecked = new Set<string>();

  constructor(doc: OpenApiDocument) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'openapi.json', components: closedObjects(nullableAsJsonSchema(doc.components ?? {})) });
  }

  problem(operation: FuzzOperation, response: FuzzResponse): string | null {
    const name = `${operation.method.toUpperCase()} ${operation.path}`;
    const status = String(response.status);
    const documented = Object.keys(operation.responseSchemas);
    const key = [status, `${status[0]}XX`, 'default'].find((k) => k in operation.responseSchemas);
    if (key === undefined) {
      this.unchecked.add(name);
      // No JSON schema for this status: fine only for a body-less answer (204) or one that is not JSON.
      if (documented.some((k) => k.startsWith('2')) && response.contentType.includes('json'))
        return `answered ${status}, documented only ${documented.join(', ')}`;
      return null;
    }
    if (!response.contentType.includes('json')) return `answered ${status} as ${response.contentType}, documented JSON`;
    const validate = this.validatorFor(`${name} ${key}`, operation.responseSchemas[key] ?? {});
    this.checked.add(name);
    if (validate(response.body)) return null;
    return `${status} body does not match its schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 300)}`;
  }

  private validatorFor(id: string, schema: Record<string, unknown>): ValidateFunction {
    const known = this.compiled.get(id);
    if (known) return known;
    // The operation's schema points at `#/components/...` of the document registered above.
    const rebased = JSON.parse(
      JSON.stringify(closedObjects(nullableAsJsonSchema(schema))).replaceAll('"#/components/', '"openapi.json#/components/'),
    ) as object;
    const validate = this.ajv.compile(rebased);
    this.compiled.set(id, validate);
    return validate;
  }
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema: `anyOf [the schema, null]`. Read wherever it stands,
 * beside a `$ref` too (how @nestjs/swagger writes a nullable object, and how readers of the document
 * take it), so the check holds the app to what its document tells a client.
 */
function nullableAsJsonSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nullableAsJsonSchema);
  if (!value || typeof value !== 'object') return value;
  const { nullable, ...rest } = value as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, nullableAsJsonSchema(v)]));
  if (nullable !== true) return nullable === undefined ? converted : { ...converted, nullable };
  const { description, ...schema } = converted;
  return { description, anyOf: [schema, { type: 'null' }] };
}

/**
 * `additionalProperties: false` on every object schema that lists its properties and says nothing of
 * other fields (a property merely named `properties` is walked as a property, not taken for the keyword).
 */
function closedObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const out = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([name, s]) => [name, closedObjects(s)]))
        : closedObjects(value),
    ]),
  );
  return out.properties && out.additionalProperties === undefined ? { ...out, additionalProperties: false } : out;
}
