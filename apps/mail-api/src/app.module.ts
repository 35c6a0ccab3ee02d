import { DynamicModule, Module, type Type } from '@nestjs/common';
import { HealthModule } from '@app/service-kit';
import type { MailConfig } from './config/mail-config.js';
import { ApiAuthModule } from './core/auth/api-auth.module.js';
import { CoreModule } from './core/core.module.js';
import { HttpCoreModule } from './core/http.module.js';
import { ContactsModule } from './modules/contacts/contacts.module.js';
import { DeliveryModule } from './modules/delivery/delivery.module.js';
import { DomainsModule } from './modules/domains/domains.module.js';
import { EventsModule } from './modules/events/events.module.js';
import { ProjectsModule } from './modules/projects/projects.module.js';
import { SendModule } from './modules/send/send.module.js';
import { TemplatesModule } from './modules/templates/templates.module.js';
import { TrackModule } from './modules/track/track.module.js';
import { UnsubscribeModule } from './modules/unsubscribe/unsubscribe.module.js';
import { VerifyModule } from './modules/verify/verify.module.js';

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
        ProjectsModule,
        ContactsModule,
        TrackModule,
        EventsModule,
        VerifyModule,
        TemplatesModule,
        DomainsModule,
        DeliveryModule,
        SendModule,
        UnsubscribeModule,
        ...extraModules,
      ],
    };
  }
}
