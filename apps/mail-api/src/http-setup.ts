import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHttpApp, setupOpenApi } from '@app/service-kit';
import { AppModule } from './app.module.js';
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
].join('\n');

/** Builds the HTTP app exactly as production runs it; main.ts and the e2e tests both call this. */
export async function createMailHttpApp(
  config: MailConfig,
  options: { extraModules?: Type[] } = {},
): Promise<NestExpressApplication> {
  return createHttpApp(AppModule.forRoot(config, options.extraModules), {
    configure: (app) =>
      setupOpenApi(app, {
        title: 'mail-api',
        version: '1.0.0',
        description: DESCRIPTION,
        bearerDescription:
          '`Authorization: Bearer <key>`. Secret keys (`sk_...`) work on every endpoint; public keys (`pk_...`) ' +
          'only on POST /v1/track. Missing or invalid key: 401; disabled project: 403.',
      }),
  });
}
