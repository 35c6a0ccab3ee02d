import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { UnsubscribeController } from './unsubscribe.controller.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';
import { UnsubscribeService } from './unsubscribe.service.js';

/** Signed unsubscribe links (used by delivery and the send endpoint's `{{unsubscribeUrl}}`) and the public endpoint behind them. */
@Module({
  imports: [ContactsModule],
  controllers: [UnsubscribeController],
  providers: [UnsubscribeLinks, UnsubscribeService],
  exports: [UnsubscribeLinks],
})
export class UnsubscribeModule {}
