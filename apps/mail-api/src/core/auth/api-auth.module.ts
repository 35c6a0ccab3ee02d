import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ProjectsModule } from '../../modules/projects/projects.module.js';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.service.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ProjectKeyCache } from './project-key-cache.service.js';

/** API-key authentication and the per-project rate limit, as the global guard of the HTTP API. */
@Module({
  imports: [ProjectsModule],
  providers: [ProjectKeyCache, ApiRateLimiter, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ProjectKeyCache],
})
export class ApiAuthModule {}
