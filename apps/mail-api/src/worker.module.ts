import { DynamicModule, Module } from '@nestjs/common';
import type { MailConfig } from './config/mail-config.js';
import { CoreModule } from './core/core.module.js';
import { BouncesModule } from './modules/bounces/bounces.module.js';
import { CampaignsModule } from './modules/campaigns/campaigns.module.js';
import { DeliveryModule } from './modules/delivery/delivery.module.js';
import { DomainsModule } from './modules/domains/domains.module.js';
import { EngagementEventsModule } from './modules/engagement/engagement-events.module.js';
import { MaintenanceModule } from './modules/maintenance/maintenance.module.js';
import { SendModule } from './modules/send/send.module.js';
import { WorkflowsModule } from './modules/workflows/workflows.module.js';

/** The worker: the same core, and the modules that hold job processors. No HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: MailConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        CoreModule.forRoot(config),
        MaintenanceModule,
        DomainsModule,
        EngagementEventsModule,
        DeliveryModule,
        SendModule,
        WorkflowsModule,
        CampaignsModule,
        BouncesModule,
      ],
    };
  }
}
