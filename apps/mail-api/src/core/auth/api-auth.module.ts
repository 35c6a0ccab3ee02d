import { Module } from '@nestjs/common';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.service.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ProjectKeyCache } from './project-key-cache.service.js';
import { ProjectKeysRepository } from './project-keys.repository.js';

/**
 * API-key authentication and the per-project rate limit: ApiKeyGuard, which createHttpApp puts on
 * every route that is not `@Public()` (http-setup.ts).
 */
@Module({
  providers: [ProjectKeysRepository, ProjectKeyCache, ApiRateLimiter, ApiKeyGuard],
  exports: [ProjectKeyCache],
})
export class ApiAuthModule {}
