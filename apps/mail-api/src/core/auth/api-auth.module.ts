import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.service.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ProjectKeyCache } from './project-key-cache.service.js';
import { ProjectKeysRepository } from './project-keys.repository.js';

/** API-key authentication and the per-project rate limit, as the global guard of the HTTP API. */
@Module({
  providers: [ProjectKeysRepository, ProjectKeyCache, ApiRateLimiter, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ProjectKeyCache],
})
export class ApiAuthModule {}
