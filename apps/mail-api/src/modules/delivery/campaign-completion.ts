import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { projectScope } from '../../core/scope/project-scope.js';
import { CampaignsRepository } from '../campaigns/campaigns.repository.js';

/** How long a worker gathers the outcomes of one campaign's emails before it checks that campaign once. */
const CHECK_DELAY_MS = 200;

/**
 * Completes a campaign shortly after the outcome of its last email. Each outcome asks for a check;
 * a worker process runs at most one per campaign every 200 ms, after the outcomes that asked for it
 * were committed (a check per email would probe the campaign's unfinished emails thousands of times a
 * second). Pending checks run at shutdown; if a process dies first, the campaign sweep completes it.
 */
@Injectable()
export class CampaignCompletion implements OnApplicationShutdown {
  private readonly logger = new Logger(CampaignCompletion.name);
  private readonly pending = new Map<string, { projectId: string; timer: NodeJS.Timeout }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly campaigns: CampaignsRepository,
  ) {}

  /** Call after the outcome of one of the campaign's emails is committed. */
  soon(projectId: string, campaignId: string): void {
    if (this.pending.has(campaignId)) return;
    const timer = setTimeout(() => void this.check(campaignId), CHECK_DELAY_MS);
    this.pending.set(campaignId, { projectId, timer });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pending.keys()].map((campaignId) => this.check(campaignId)));
  }

  private async check(campaignId: string): Promise<void> {
    const entry = this.pending.get(campaignId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(campaignId);
    try {
      await this.campaigns.completeIfFinished(this.dataSource, projectScope(entry.projectId), campaignId);
    } catch (err) {
      this.logger.warn({ campaignId, err: (err as Error).message }, 'campaign completion check failed; the sweep completes it');
    }
  }
}
