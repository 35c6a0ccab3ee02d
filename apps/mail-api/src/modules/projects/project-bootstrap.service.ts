import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { ProjectsService } from './projects.service.js';

/** Runs the `Default` project bootstrap when the API starts with MAIL_BOOTSTRAP_* set. */
@Injectable()
export class ProjectBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(ProjectBootstrap.name);

  constructor(
    private readonly projects: ProjectsService,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const keys = this.config.bootstrapKeys;
    if (!keys) return;
    const result = await this.projects.ensureBootstrapProject(keys.secretKey, keys.publicKey);
    // Never log the keys: the operator already has them, and logs travel further than env vars.
    if (result.created) this.logger.log({ projectId: result.projectId }, 'bootstrap project Default created');
  }
}
