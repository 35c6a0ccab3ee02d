import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHttpApp, setupOpenApi } from '@app/service-kit';
import { AppModule } from './app.module.js';
import { AuthGuard } from './core/auth/auth.guard.js';
import type { PlatformConfig } from './config/platform-config.js';

/** Builds the HTTP app exactly as production runs it; main.ts and the e2e tests both call this. */
export async function createPlatformHttpApp(
  config: PlatformConfig,
  options: { extraModules?: Type[] } = {},
): Promise<NestExpressApplication> {
  return createHttpApp(AppModule.forRoot(config, options.extraModules), {
    trustProxy: config.trustProxy,
    authGuard: AuthGuard,
    invalidInputStatus: 400,
    configure: (app) =>
      setupOpenApi(app, {
        title: 'platform-api',
        version: '1.0.0',
        description:
          'Multi-tenant back-office API: accounts and access control, directory, audit logs, notifications, ' +
          'events, attachments and the AI assistant. Errors are `{error}` (login, feature-check, refresh and ' +
          'reset-confirm: `{ok: false, error}`); every response carries `X-Request-Id`.',
        bearerDescription: 'The JWT from POST /auth/login (also accepted as the `auth_token` cookie).',
      }),
  });
}
