import { Global, Module } from '@nestjs/common';
import { AccessLogService } from './access-log.service.js';
import { AccessLogsRepository } from './access-logs.repository.js';
import { ActionLogsRepository } from './action-logs.repository.js';
import { CommandBus } from './command-bus.service.js';

/** The command bus every module's mutations run through, the access log writer and the action log's one writer (the queue dashboard records its writes there too). */
@Global()
@Module({
  providers: [CommandBus, AccessLogService, ActionLogsRepository, AccessLogsRepository],
  exports: [CommandBus, AccessLogService, ActionLogsRepository],
})
export class AuditCoreModule {}
