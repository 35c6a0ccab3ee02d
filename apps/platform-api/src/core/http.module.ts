import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { createValidationPipe } from '@app/service-kit';
import { PlatformExceptionFilter } from './errors/platform-exception.filter.js';

/** HTTP-only globals: one validation pipe (400 with field details) and one exception filter. */
@Module({
  providers: [
    { provide: APP_PIPE, useFactory: () => createValidationPipe(400) },
    { provide: APP_FILTER, useClass: PlatformExceptionFilter },
  ],
})
export class HttpCoreModule {}
