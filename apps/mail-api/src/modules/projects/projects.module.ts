import { Module } from '@nestjs/common';
import { ProjectBootstrap } from './project-bootstrap.service.js';
import { ProjectsService } from './projects.service.js';

/** Projects and keys. Imported by the API (which runs the bootstrap at start), not by the worker. */
@Module({ providers: [ProjectsService, ProjectBootstrap], exports: [ProjectsService] })
export class ProjectsModule {}
