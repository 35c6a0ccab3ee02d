import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import cors from 'cors';
import { createHttpApp, setupOpenApi } from '@app/service-kit';
import { AppModule } from './app.module.js';
import { ApiKeyGuard } from './core/auth/api-key.guard.js';
import type { MailConfig } from './config/mail-config.js';

const DESCRIPTION = [
  'Transactional and marketing email: sending, tracking, contacts, templates, campaigns, segments, workflows,',
  'sending domains and address verification. The project is derived from the API key.',
  '',
  'Every response carries `X-Request-Id` (a valid incoming one is echoed). Every error has one body:',
  '`{success: false, error: {code, message, statusCode, requestId, errors?, suggestion?}, timestamp, message}`,',
  'where `error.requestId` equals the `X-Request-Id` header, `errors` lists field problems `{field, message, code}`',
  '(422 `VALIDATION_ERROR`), `suggestion` gives guidance when there is any, `timestamp` is ISO 8601 and the',
  'top-level `message` repeats `error.message`. Malformed JSON is 400 `INVALID_JSON`; unknown routes 404',
  '`NOT_FOUND`; rate limits 429 `RATE_LIMIT_EXCEEDED` with `Retry-After`; unexpected failures 500',
  '`INTERNAL_ERROR` with a generic message.',
  '',
  'Authentication: `Authorization: Bearer <key>`. No header: 401 `UNAUTHORIZED`; a malformed key or one of no',
  'project: 401 `INVALID_API_KEY`; a disabled project: 403 `PROJECT_DISABLED`; a public key on a route that needs',
  'the secret key: 403 `SECRET_KEY_REQUIRED`. Keys are cached per instance for `MAIL_KEY_CACHE_TTL_SECONDS`',
  '(default 30 s): disabling a project or rotating its keys takes effect within that time. A well-formed key of',
  'no project is remembered as unknown for `MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS` (default 5 s).',
  '',
  'Rate limit: `MAIL_RATE_LIMIT_PER_MINUTE` (default 1000) secret-key requests per project per fixed minute, shared',
  'by all instances. Public-key (`pk_`) requests never spend that budget: they have their own,',
  '`MAIL_PUBLIC_RATE_LIMIT_PER_MINUTE` per project (default: the same number), and within it',
  '`MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE` (default 120) per client address (IPv6: per /64 network). Every',
  'authenticated response carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the',
  'window resets) of the budget it spent (of two, the nearer its limit); past a limit: 429 `RATE_LIMIT_EXCEEDED`',
  'with `Retry-After`.',
  '',
  'Lists are keyset-paged with an opaque `cursor`, newest first: `GET /contacts` answers',
  '`{contacts, cursor, hasMore, total}`, other lists `{items, nextCursor, hasMore, total}`; `limit` is 1 to 100',
  '(default 20), anything else a 422.',
].join('\n');

/** Public keys are meant for browsers: only /v1/track answers cross-origin requests (no cookies involved). */
const TRACK_CORS = { origin: '*', methods: ['POST'], allowedHeaders: ['Authorization', 'Content-Type'], maxAge: 86_400 };

/** Builds the HTTP app exactly as production runs it; main.ts and the e2e tests both call this. */
export async function createMailHttpApp(config: MailConfig, options: { extraModules?: Type[] } = {}): Promise<NestExpressApplication> {
  return createHttpApp(AppModule.forRoot(config, options.extraModules), {
    trustProxy: config.trustProxy,
    authGuard: ApiKeyGuard,
    invalidInputStatus: 422,
    // 1 MB per body; POST /v1/send declares its own larger limit (@BodyLimit) for attachments.
    bodyLimit: '1mb',
    configure: (app) => {
      // Mounted on its path rather than `enableCors` with a per-request decision: other requests do not pass it.
      app.use('/v1/track', cors(TRACK_CORS));
      setupOpenApi(app, {
        title: 'mail-api',
        version: '1.0.0',
        description: DESCRIPTION,
        bearerDescription:
          '`Authorization: Bearer <key>`. Secret keys (`sk_...`) work on every endpoint; public keys (`pk_...`) ' +
          'only on POST /v1/track. Missing or invalid key: 401; disabled project: 403.',
      });
    },
  });
}
