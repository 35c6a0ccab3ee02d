import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { createValidationPipe } from '@app/service-kit';
import { MailExceptionFilter } from './errors/mail-exception.filter.js';

/** HTTP-only globals: one validation pipe (422 with field errors) and one exception filter. */
@Module({
  providers: [
    { provide: APP_PIPE, useFactory: () => createValidationPipe(422) },
    { provide: APP_FILTER, useClass: MailExceptionFilter },
  ],
})
export class HttpCoreModule {}
