import { DynamicModule, Module, type Type } from '@nestjs/common';
import { APP_VERSION } from './build-info.js';
import { HealthModule, MetricsModule, QueueDashboardModule } from '@app/service-kit';
import type { MailConfig } from './config/mail-config.js';
import { ApiAuthModule } from './core/auth/api-auth.module.js';
import { MailQueueDashboardAccess } from './core/auth/admin-token.js';
import { CoreModule } from './core/core.module.js';
import { HttpCoreModule } from './core/http.module.js';
import { CampaignsModule } from './modules/campaigns/campaigns.module.js';
import { ContactsModule } from './modules/contacts/contacts.module.js';
import { DeliveryModule } from './modules/delivery/delivery.module.js';
import { DomainsModule } from './modules/domains/domains.module.js';
import { MailMetricsModule } from './modules/metrics/metrics.module.js';
import { EngagementEventsModule } from './modules/engagement/engagement-events.module.js';
import { EngagementModule } from './modules/engagement/engagement.module.js';
import { EventsModule } from './modules/events/events.module.js';
import { ProjectsModule } from './modules/projects/projects.module.js';
import { SegmentsModule } from './modules/segments/segments.module.js';
import { SendModule } from './modules/send/send.module.js';
import { SuppressionsModule } from './modules/suppressions/suppressions.module.js';
import { TemplatesModule } from './modules/templates/templates.module.js';
import { TrackModule } from './modules/track/track.module.js';
import { UnsubscribeModule } from './modules/unsubscribe/unsubscribe.module.js';
import { VerifyModule } from './modules/verify/verify.module.js';
import { WorkflowsModule } from './modules/workflows/workflows.module.js';

/** The HTTP API. */
@Module({})
export class AppModule {
  /** `extraModules`: test-only controllers that exercise the HTTP plumbing. */
  static forRoot(config: MailConfig, extraModules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        HttpCoreModule,
        ApiAuthModule,
        HealthModule,
        MetricsModule.forRoot({
          service: 'mail-api',
          endpoint: true,
          queueNamePrefix: 'mail-',
          token: config.metricsToken,
          version: APP_VERSION,
        }),
        MailMetricsModule,
        // The queue dashboard exists only when an operator set MAIL_ADMIN_TOKEN or MAIL_ADMIN_WRITE_TOKEN (else /admin/queues is a 404).
        ...(config.adminToken || config.adminWriteToken
          ? [QueueDashboardModule.forRoot({ publicRoute: true, access: MailQueueDashboardAccess })]
          : []),
        ProjectsModule,
        ContactsModule,
        TrackModule,
        EventsModule,
        VerifyModule,
        TemplatesModule,
        SegmentsModule,
        DomainsModule,
        EngagementEventsModule,
        EngagementModule,
        CampaignsModule,
        DeliveryModule,
        SendModule,
        UnsubscribeModule,
        WorkflowsModule,
        SuppressionsModule,
        ...extraModules,
      ],
    };
  }
}
