import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '@app/service-kit';
import type { EngagementRequestInfo } from './engagement-request.decorator.js';
import { EngagementRecorder } from './engagement-recorder.js';
import { requestMachineReason } from './machine-detection.js';
import { TrackingLinks, type TrackedEmail } from './tracking-links.js';

export const INVALID_TRACKING_LINK = 'INVALID_TRACKING_LINK';

function invalidLink(): DomainError {
  return new DomainError(INVALID_TRACKING_LINK, 'invalid tracking link', {
    status: 400,
    suggestion: 'use the complete link from the email',
  });
}

/**
 * Opens and clicks of marketing emails, from the signed links in them (tracking-links.ts). Every pixel
 * load and every link followed is recorded, marked as a person's or a machine's (machine-detection.ts);
 * the email keeps the first of each (campaign stats count recipients, each once), and a person's first
 * open and first click become the contact's `email.opened` / `email.clicked` events. A click also
 * counts as an open (mail clients that block images still follow links). EngagementRecorder writes
 * them, batched.
 */
@Injectable()
export class EngagementService {
  private readonly logger = new Logger(EngagementService.name);

  constructor(
    private readonly links: TrackingLinks,
    private readonly recorder: EngagementRecorder,
  ) {}

  /** The pixel was loaded. 400 for a token this service did not sign. */
  async opened(token: string, request: EngagementRequestInfo): Promise<void> {
    const target = this.links.verifyOpen(token);
    if (!target) throw invalidLink();
    await this.record(target, request, null);
  }

  /**
   * A tracked link was followed: answers the URL to redirect to (only ever one that was in the email),
   * a machine's click too.
   */
  async clicked(token: string, request: EngagementRequestInfo): Promise<string> {
    const target = this.links.verifyClick(token);
    if (!target) throw invalidLink();
    await this.record(target, request, target.url);
    return target.url;
  }

  /** Never fails the request: a person following a link must get there even if the database is away. */
  private async record(target: TrackedEmail, request: EngagementRequestInfo, url: string | null): Promise<void> {
    try {
      await this.recorder.record({
        projectId: target.projectId,
        emailId: target.emailId,
        kind: url === null ? 'OPEN' : 'CLICK',
        url,
        requestReason: requestMachineReason(request),
        receivedAt: request.receivedAt,
      });
    } catch (err) {
      this.logger.error({ err: (err as Error).message, emailId: target.emailId }, 'recording an open or click failed');
    }
  }
}
