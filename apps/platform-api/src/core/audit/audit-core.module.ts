import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AccessLogService } from './access-log.service.js';
import { AccessLogsRepository } from './access-logs.repository.js';
import { ActionLogsRepository } from './action-logs.repository.js';
import { CommandBus } from './command-bus.service.js';
import { UndoTokenInterceptor } from './undo-token.js';

/** The command bus every module's mutations run through, the `X-Undo-Token` header, and the access log writer. */
@Global()
@Module({
  providers: [
    CommandBus,
    AccessLogService,
    ActionLogsRepository,
    AccessLogsRepository,
    { provide: APP_INTERCEPTOR, useClass: UndoTokenInterceptor },
  ],
  exports: [CommandBus, AccessLogService],
})
export class AuditCoreModule {}
