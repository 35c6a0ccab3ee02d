import { DynamicModule, Module, type Type } from '@nestjs/common';
import { APP_VERSION } from './build-info.js';
import { HealthModule, MetricsModule, QueueDashboardModule } from '@app/service-kit';
import type { PlatformConfig } from './config/platform-config.js';
import { CoreModule } from './core/core.module.js';
import { HttpCoreModule } from './core/http.module.js';
import { AuthCoreModule } from './core/auth/auth-core.module.js';
import { PlatformQueueDashboardAccess } from './core/auth/queue-dashboard-access.js';
import { EventsCoreModule } from './core/events/events-core.module.js';
import { isClientBroadcastEvent } from './modules/platform-events/declared-events.js';
import { AuditCoreModule } from './core/audit/audit-core.module.js';
import { NotificationsModule } from './modules/notifications/notifications.module.js';
import { PlatformEventsModule } from './modules/platform-events/platform-events.module.js';
import { AuthModule } from './modules/auth/auth.module.js';
import { BootstrapModule } from './modules/bootstrap/bootstrap.module.js';
import { DirectoryModule } from './modules/directory/directory.module.js';
import { FeaturesModule } from './modules/features/features.module.js';
import { NavigationModule } from './modules/navigation/navigation.module.js';
import { RolesModule } from './modules/roles/roles.module.js';
import { SidebarModule } from './modules/sidebar/sidebar.module.js';
import { UsersModule } from './modules/users/users.module.js';
import { AuditLogsModule } from './modules/audit-logs/audit-logs.module.js';
import { AttachmentsModule } from './modules/attachments/attachments.module.js';
import { AiAssistantModule } from './modules/ai-assistant/ai-assistant.module.js';

/** The HTTP API. */
@Module({})
export class AppModule {
  /** `extraModules`: test-only controllers that exercise the HTTP plumbing. */
  static forRoot(config: PlatformConfig, extraModules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        HttpCoreModule,
        AuthCoreModule,
        EventsCoreModule.forRoot({ journaled: isClientBroadcastEvent }),
        AuditCoreModule,
        HealthModule,
        MetricsModule.forRoot({
          service: 'platform-api',
          endpoint: true,
          queueNamePrefix: 'platform-',
          token: config.metricsToken,
          version: APP_VERSION,
        }),
        QueueDashboardModule.forRoot({ publicRoute: false, access: PlatformQueueDashboardAccess }),
        BootstrapModule,
        AuthModule,
        RolesModule,
        UsersModule,
        SidebarModule,
        FeaturesModule,
        NavigationModule,
        DirectoryModule,
        NotificationsModule,
        PlatformEventsModule,
        AuditLogsModule,
        AttachmentsModule,
        AiAssistantModule,
        ...extraModules,
      ],
    };
  }
}
