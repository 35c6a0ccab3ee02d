import type { FieldError } from '@app/contracts';
import { isNonPublicHost } from '@app/service-kit';
import {
  MAX_WEBHOOK_BODY_BYTES,
  MAX_WEBHOOK_HEADER_VALUE,
  MAX_WEBHOOK_HEADERS,
  MAX_WEBHOOK_URL_LENGTH,
  WEBHOOK_METHODS,
  type WebhookMethod,
} from './workflow-definition.js';

/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// eslint-disable-next-line no-control-regex -- refusing control characters in header values is the point
const HEADER_VALUE_FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/**
 * Headers the service sets itself: the signature and delivery ids, the JSON body's framing, and
 * hop-by-hop headers a client must not choose.
 */
export const RESERVED_WEBHOOK_HEADERS = new Set([
  'x-webhook-signature',
  'x-webhook-id',
  'x-webhook-attempt',
  'content-type',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
]);

function urlErrors(value: unknown, field: string, refusePrivate: boolean): FieldError[] {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_WEBHOOK_URL_LENGTH) {
    return [{ field, message: `url must be an http or https URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters`, code: 'isUrl' }];
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [{ field, message: 'url must be an http or https URL', code: 'isUrl' }];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [{ field, message: 'url must use http or https', code: 'isUrl' }];
  if (url.username || url.password) {
    return [{ field, message: 'url must not carry credentials; send them in headers', code: 'isUrl' }];
  }
  if (refusePrivate && isNonPublicHost(url.hostname)) {
    return [{ field, message: 'url must not point to a private or loopback address', code: 'privateAddress' }];
  }
  return [];
}

function headerErrors(value: unknown, path: string): FieldError[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: path, message: 'headers must be an object of header names to string values', code: 'isObject' }];
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_WEBHOOK_HEADERS)
    return [{ field: path, message: `headers must have at most ${MAX_WEBHOOK_HEADERS} entries`, code: 'maxSize' }];
  const errors: FieldError[] = [];
  for (const [name, headerValue] of entries) {
    const field = `${path}.${name.length > 64 ? `${name.slice(0, 64)}...` : name}`;
    if (!HEADER_NAME.test(name))
      errors.push({ field, message: 'header names must be HTTP tokens of at most 100 characters', code: 'isHeaderName' });
    else if (RESERVED_WEBHOOK_HEADERS.has(name.toLowerCase()))
      errors.push({ field, message: `header ${name} is set by the service`, code: 'reservedHeader' });
    else if (typeof headerValue !== 'string' || headerValue.length > MAX_WEBHOOK_HEADER_VALUE || HEADER_VALUE_FORBIDDEN.test(headerValue)) {
      errors.push({
        field,
        message: `header values must be strings of at most ${MAX_WEBHOOK_HEADER_VALUE} characters without control characters`,
        code: 'isHeaderValue',
      });
    }
  }
  return errors;
}

/** Field errors of a WEBHOOK step's config `{url, method?, headers?, body?}` (keys already checked). */
export function validateWebhookConfig(config: Record<string, unknown>, path: string, refusePrivate: boolean): FieldError[] {
  const errors = urlErrors(config.url, `${path}.url`, refusePrivate);
  const method = config.method;
  if (method !== undefined && !(typeof method === 'string' && WEBHOOK_METHODS.includes(method.toUpperCase() as WebhookMethod))) {
    errors.push({ field: `${path}.method`, message: `method must be one of: ${WEBHOOK_METHODS.join(', ')}`, code: 'isIn' });
  }
  if (config.headers !== undefined) errors.push(...headerErrors(config.headers, `${path}.headers`));
  if (config.body !== undefined && Buffer.byteLength(JSON.stringify(config.body), 'utf8') > MAX_WEBHOOK_BODY_BYTES) {
    errors.push({ field: `${path}.body`, message: `body must be at most ${MAX_WEBHOOK_BODY_BYTES} bytes of JSON`, code: 'maxSize' });
  }
  return errors;
}
