import { DynamicModule, Module } from '@nestjs/common';
import type { PlatformConfig } from './config/platform-config.js';
import { CoreModule } from './core/core.module.js';
import { AuthCoreModule } from './core/auth/auth-core.module.js';
import { EventsCoreModule } from './core/events/events-core.module.js';
import { isClientBroadcastEvent } from './modules/platform-events/declared-events.js';
import { NotificationsModule } from './modules/notifications/notifications.module.js';
import { AuthModule } from './modules/auth/auth.module.js';
import { MaintenanceModule } from './modules/maintenance/maintenance.module.js';
import { AiActionsWorkerModule } from './modules/ai-assistant/actions/ai-actions-worker.module.js';
import { AttachmentsWorkerModule } from './modules/attachments/attachments-worker.module.js';

/** The worker: the same core, and the modules that hold job processors. No HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: PlatformConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        CoreModule.forRoot(config),
        AuthCoreModule,
        EventsCoreModule.forRoot({ journaled: isClientBroadcastEvent }),
        MaintenanceModule,
        AuthModule,
        NotificationsModule,
        AiActionsWorkerModule,
        AttachmentsWorkerModule,
      ],
    };
  }
}
