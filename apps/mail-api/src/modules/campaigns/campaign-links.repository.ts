import { Injectable } from '@nestjs/common';
import { queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';

/** One tracked link of a campaign and its clicks. */
export interface CampaignLinkRow {
  url: string;
  clicks: number;
  uniqueClicks: number;
  machineClicks: number;
}

/**
 * Per-link click counts of a campaign: the counters the engagement module adds to as it records
 * clicks (`campaign_link_clicks`, one row per clicked link), so the answer costs the campaign's
 * number of links, not its number of clicks.
 */
@Injectable()
export class CampaignLinksRepository {
  /** Every clicked link: all clicks, recipients with a person's click, machine clicks; most clicked first. */
  links(db: Db, scope: ProjectScope, campaignId: string): Promise<CampaignLinkRow[]> {
    return queryPrepared<CampaignLinkRow>(
      db,
      `SELECT url, clicks, unique_clicks AS "uniqueClicks", machine_clicks AS "machineClicks"
         FROM campaign_link_clicks
        WHERE project_id = $1 AND campaign_id = $2
        ORDER BY clicks DESC, url COLLATE "C"`,
      [scope.projectId, campaignId],
    );
  }
}
