import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MailErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { projectScope } from '../../core/scope/project-scope.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { UnsubscribeLinks, type UnsubscribeTarget } from './unsubscribe-links.js';

/**
 * The public side of unsubscribe links. A valid link always succeeds, whether the contact was
 * subscribed, already unsubscribed or deleted since: the answer reveals nothing about the contact,
 * and a repeated POST is harmless.
 */
@Injectable()
export class UnsubscribeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly links: UnsubscribeLinks,
    private readonly contacts: ContactsRepository,
  ) {}

  /** Checks the link only (400 when it is not one of ours): what a GET does, which must change nothing. */
  checkLink(token: string): void {
    this.target(token);
  }

  async unsubscribe(token: string): Promise<void> {
    const target = this.target(token);
    // The signed link names the project: the write is scoped to it like every contact write.
    await this.contacts.unsubscribe(this.dataSource, projectScope(target.projectId), target.contactId);
  }

  private target(token: string): UnsubscribeTarget {
    const target = this.links.verify(token);
    if (!target) {
      throw new DomainError(MailErrorCode.InvalidUnsubscribeLink, 'invalid unsubscribe link', {
        status: 400,
        suggestion: 'use the complete link from the email',
      });
    }
    return target;
  }
}
