import { Injectable } from '@nestjs/common';
import { MailErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { Sql } from '../../core/database/sql.service.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';

/**
 * The public side of unsubscribe links. A valid link always succeeds, whether the contact was
 * subscribed, already unsubscribed or deleted since: the answer reveals nothing about the contact,
 * and clicking twice (or a one-click POST after the GET) is harmless.
 */
@Injectable()
export class UnsubscribeService {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly sql: Sql,
  ) {}

  async unsubscribe(token: string): Promise<void> {
    const target = this.links.verify(token);
    if (!target) {
      throw new DomainError(MailErrorCode.InvalidUnsubscribeLink, 'invalid unsubscribe link', {
        status: 400,
        suggestion: 'use the complete link from the email',
      });
    }
    // Project-scoped like every contact query; `AND subscribed` keeps a repeat from touching the row.
    await this.sql.query(
      `UPDATE contacts SET subscribed = false, updated_at = now() WHERE project_id = $1 AND id = $2 AND subscribed`,
      [target.projectId, target.contactId],
    );
  }
}
