import { DynamicModule, Module, type Type } from '@nestjs/common';
import { HealthModule } from '@app/service-kit';
import type { MailConfig } from './config/mail-config.js';
import { CoreModule } from './core/core.module.js';
import { HttpCoreModule } from './core/http.module.js';
import { ProjectsModule } from './modules/projects/projects.module.js';

/** The HTTP API. */
@Module({})
export class AppModule {
  /** `extraModules`: test-only controllers that exercise the HTTP plumbing. */
  static forRoot(config: MailConfig, extraModules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [CoreModule.forRoot(config), HttpCoreModule, HealthModule, ProjectsModule, ...extraModules],
    };
  }
}
