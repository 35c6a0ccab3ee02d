import { Injectable } from '@nestjs/common';
import { MailErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { Sql } from '../../core/database/sql.service.js';
import { UnsubscribeLinks, type UnsubscribeTarget } from './unsubscribe-links.js';

/**
 * The public side of unsubscribe links. A valid link always succeeds, whether the contact was
 * subscribed, already unsubscribed or deleted since: the answer reveals nothing about the contact,
 * and a repeated POST is harmless.
 */
@Injectable()
export class UnsubscribeService {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly sql: Sql,
  ) {}

  /** Checks the link only (400 when it is not one of ours): what a GET does, which must change nothing. */
  checkLink(token: string): void {
    this.target(token);
  }

  async unsubscribe(token: string): Promise<void> {
    const target = this.target(token);
    // Project-scoped like every contact query; `AND subscribed` keeps a repeat from touching the row.
    await this.sql.query(`UPDATE contacts SET subscribed = false, updated_at = now() WHERE project_id = $1 AND id = $2 AND subscribed`, [
      target.projectId,
      target.contactId,
    ]);
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
