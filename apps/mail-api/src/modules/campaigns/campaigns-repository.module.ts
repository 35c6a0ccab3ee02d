import { Module } from '@nestjs/common';
import { CampaignsRepository } from './campaigns.repository.js';

/**
 * The one writer of `campaigns`, in a module of its own so that delivery (whose CampaignCompletion
 * completes a campaign after its last email) and the campaigns module share one instance without
 * importing each other (CampaignsModule imports DeliveryModule).
 */
@Module({ providers: [CampaignsRepository], exports: [CampaignsRepository] })
export class CampaignsRepositoryModule {}
