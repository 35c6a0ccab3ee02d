import { ApiProperty } from '@nestjs/swagger';

/** `GET /campaigns/{id}/links` (decisions.md "Engagement analytics"). */
export interface MailCampaignLink {
  url: string;
  clicks: number;
  uniqueClicks: number;
  machineClicks: number;
}

class CampaignLinkDto implements MailCampaignLink {
  @ApiProperty({ description: 'The URL the email linked to.' }) url: string;
  @ApiProperty({ description: "Every click on the link, a person's or a machine's." }) clicks: number;
  @ApiProperty({ description: "Recipients with at least one person's click on the link." }) uniqueClicks: number;
  @ApiProperty({ description: 'Clicks marked `machine` (scanners, previews, proxies, clicks at delivery, bursts).' })
  machineClicks: number;
}

class CampaignLinksDto {
  @ApiProperty({ type: [CampaignLinkDto], description: 'Every link clicked at least once, most clicked first.' })
  items: CampaignLinkDto[];
}

export class CampaignLinksResponse {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ type: CampaignLinksDto }) data: CampaignLinksDto;
}
