import { DynamicModule, Module } from '@nestjs/common';
import type { MailConfig } from './config/mail-config.js';
import { CoreModule } from './core/core.module.js';
import { DeliveryModule } from './modules/delivery/delivery.module.js';
import { DomainsModule } from './modules/domains/domains.module.js';
import { MaintenanceModule } from './modules/maintenance/maintenance.module.js';
import { SendModule } from './modules/send/send.module.js';

/** The worker: the same core, and the modules that hold job processors. No HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: MailConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config), MaintenanceModule, DomainsModule, DeliveryModule, SendModule],
    };
  }
}
