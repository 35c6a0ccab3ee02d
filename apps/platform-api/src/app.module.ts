import { DynamicModule, Module, type Type } from '@nestjs/common';
import { HealthModule } from '@app/service-kit';
import type { PlatformConfig } from './config/platform-config.js';
import { CoreModule } from './core/core.module.js';
import { HttpCoreModule } from './core/http.module.js';
import { AuthCoreModule } from './core/auth/auth-core.module.js';
import { AuthModule } from './modules/auth/auth.module.js';
import { BootstrapModule } from './modules/bootstrap/bootstrap.module.js';

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
        HealthModule,
        BootstrapModule,
        AuthModule,
        ...extraModules,
      ],
    };
  }
}
