import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { CommandBus } from './command-bus.service.js';
import { UndoTokenInterceptor } from './undo-token.js';

/** The command bus every module's mutations run through, and the `X-Undo-Token` header. */
@Global()
@Module({
  providers: [CommandBus, { provide: APP_INTERCEPTOR, useClass: UndoTokenInterceptor }],
  exports: [CommandBus],
})
export class AuditCoreModule {}
