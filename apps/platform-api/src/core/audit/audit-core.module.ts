import { Global, Module } from '@nestjs/common';
import { AccessLogService } from './access-log.service.js';
import { AccessLogsRepository } from './access-logs.repository.js';
import { ActionLogsRepository } from './action-logs.repository.js';
import { CommandBus } from './command-bus.service.js';

/** The command bus every module's mutations run through and the access log writer. */
@Global()
@Module({
  providers: [CommandBus, AccessLogService, ActionLogsRepository, AccessLogsRepository],
  exports: [CommandBus, AccessLogService],
})
export class AuditCoreModule {}
