import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import type { MailContact, MailContactList, MailContactUpsertResult } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import { hasContactChanges, parseContactData } from './contact-data.js';
import type { ListContactsQuery, UpdateContactBody, UpsertContactBody } from './contacts.dto.js';
import { ContactsRepository, toContact } from './contacts.repository.js';

export interface ContactUpsertOutcome {
  contact: MailContactUpsertResult;
  created: boolean;
}

/** Contacts of the calling project. Another project's contact is a 404, exactly like a missing one. */
@Injectable()
export class ContactsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly contacts: ContactsRepository,
  ) {}

  async list(project: ProjectContext, query: ListContactsQuery): Promise<MailContactList> {
    const { rows, total } = await this.contacts.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      subscribed: query.subscribed,
      search: query.search || undefined,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return {
      contacts: page.map(toContact),
      cursor: hasMore ? encodeCursor(page[page.length - 1].id) : null,
      hasMore,
      total,
    };
  }

  /** Creates the contact, or updates the one with this email (any letter case). */
  async upsert(project: ProjectContext, body: UpsertContactBody): Promise<ContactUpsertOutcome> {
    const { row, inserted } = await this.contacts.upsert(this.dataSource, scopeOf(project), {
      email: body.email,
      subscribed: body.subscribed,
      patch: parseContactData(body.data),
    });
    return { contact: { ...toContact(row), _meta: { isNew: inserted, isUpdate: !inserted } }, created: inserted };
  }

  async get(project: ProjectContext, id: string): Promise<MailContact> {
    const row = isUUID(id) ? await this.contacts.findById(this.dataSource, scopeOf(project), id) : null;
    if (!row) throw contactNotFound();
    return toContact(row);
  }

  async update(project: ProjectContext, id: string, body: UpdateContactBody): Promise<MailContact> {
    if (!isUUID(id)) throw contactNotFound();
    const patch = parseContactData(body.data);
    // Nothing to change: answer the contact as it is, without a write (updatedAt stays).
    if (body.subscribed === undefined && !hasContactChanges(patch)) return this.get(project, id);
    const row = await this.contacts.update(this.dataSource, scopeOf(project), { id, subscribed: body.subscribed, patch });
    if (!row) throw contactNotFound();
    return toContact(row);
  }

  async remove(project: ProjectContext, id: string): Promise<void> {
    if (!isUUID(id) || !(await this.contacts.delete(this.dataSource, scopeOf(project), id))) throw contactNotFound();
  }
}

function contactNotFound(): DomainError {
  return DomainError.notFound('contact not found');
}
