import { Module } from '@nestjs/common';
import { ProjectKeysRepository } from '../../core/auth/project-keys.repository.js';
import { ProjectBootstrap } from './project-bootstrap.service.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

/** Projects and keys. Imported by the API (which runs the bootstrap at start), not by the worker. */
@Module({ providers: [ProjectsService, ProjectsRepository, ProjectKeysRepository, ProjectBootstrap], exports: [ProjectsService] })
export class ProjectsModule {}
