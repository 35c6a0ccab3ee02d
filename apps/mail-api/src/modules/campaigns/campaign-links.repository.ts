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
 * Per-link click counts of a campaign, read from `email_engagements` (written by the engagement
 * module). The inner grouping (link, recipient) follows the order of the partial index
 * email_engagements_campaign_links_idx, which also holds `machine`: Postgres answers it from the index
 * alone, without a sort.
 */
@Injectable()
export class CampaignLinksRepository {
  /** Every clicked link: all clicks, recipients with a person's click, machine clicks; most clicked first. */
  links(db: Db, scope: ProjectScope, campaignId: string): Promise<CampaignLinkRow[]> {
    return queryPrepared<CampaignLinkRow>(
      db,
      `SELECT url, sum(clicks)::int AS clicks, count(*) FILTER (WHERE by_person)::int AS "uniqueClicks",
              sum(machine_clicks)::int AS "machineClicks"
         FROM (SELECT url, email_id, count(*) AS clicks, count(*) FILTER (WHERE machine) AS machine_clicks,
                      bool_or(NOT machine) AS by_person
                 FROM email_engagements
                WHERE project_id = $1 AND campaign_id = $2 AND kind = 'CLICK'
                GROUP BY url, email_id) per_recipient
        GROUP BY url
        ORDER BY clicks DESC, url`,
      [scope.projectId, campaignId],
    );
  }
}
