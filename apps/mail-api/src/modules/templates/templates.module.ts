import { Module } from '@nestjs/common';
import { TemplatesController } from './templates.controller.js';
import { TemplatesRepository } from './templates.repository.js';
import { TemplatesService } from './templates.service.js';

/** Templates CRUD; `TemplatesService.findById` and `template-rendering.ts` serve the send path. */
@Module({ controllers: [TemplatesController], providers: [TemplatesService, TemplatesRepository], exports: [TemplatesService] })
export class TemplatesModule {}
