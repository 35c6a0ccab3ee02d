import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import type { MailList, MailTemplate } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import type { CreateTemplateBody, ListTemplatesQuery, UpdateTemplateBody } from './templates.dto.js';
import { TemplatesRepository, toTemplate, type TemplateFields } from './templates.repository.js';

/**
 * Templates of the calling project. Another project's template is a 404, exactly like a missing one.
 * The send endpoint reads templates through `findById`.
 */
@Injectable()
export class TemplatesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly templates: TemplatesRepository,
  ) {}

  async list(project: ProjectContext, query: ListTemplatesQuery): Promise<MailList<MailTemplate>> {
    const { rows, total } = await this.templates.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      search: query.search || undefined,
      type: query.type,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toTemplate), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  async create(project: ProjectContext, body: CreateTemplateBody): Promise<MailTemplate> {
    const row = await this.templates.insert(this.dataSource, scopeOf(project), {
      name: body.name,
      description: body.description ?? null,
      subject: body.subject,
      body: body.body,
      from: body.from ?? null,
      fromName: body.fromName ?? null,
      replyTo: body.replyTo ?? null,
      type: body.type ?? 'TRANSACTIONAL',
    });
    return toTemplate(row);
  }

  /** The project's template; a 404 `NOT_FOUND` DomainError when it has none with this id. */
  async findById(project: ProjectContext, id: string): Promise<MailTemplate> {
    const row = isUUID(id) ? await this.templates.findById(this.dataSource, scopeOf(project), id) : null;
    if (!row) throw templateNotFound();
    return toTemplate(row);
  }

  /** Sets the fields present in the body; `null` clears an optional one. An empty body changes nothing. */
  async update(project: ProjectContext, id: string, body: UpdateTemplateBody): Promise<MailTemplate> {
    if (!isUUID(id)) throw templateNotFound();
    const patch: Partial<TemplateFields> = {};
    for (const field of ['name', 'description', 'subject', 'body', 'from', 'fromName', 'replyTo', 'type'] as const) {
      if (body[field] !== undefined) (patch as Record<string, unknown>)[field] = body[field];
    }
    if (Object.keys(patch).length === 0) return this.findById(project, id);
    const row = await this.templates.update(this.dataSource, scopeOf(project), { id, patch });
    if (!row) throw templateNotFound();
    return toTemplate(row);
  }

  async remove(project: ProjectContext, id: string): Promise<void> {
    if (!isUUID(id) || !(await this.templates.delete(this.dataSource, scopeOf(project), id))) throw templateNotFound();
  }
}

function templateNotFound(): DomainError {
  return DomainError.notFound('template not found');
}
