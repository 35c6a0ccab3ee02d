import { Projects1763790000000 } from './1763790000000-Projects.js';
import { ContactsAndEvents1763800000000 } from './1763800000000-ContactsAndEvents.js';
import { MailDelivery1763850000000 } from './1763850000000-MailDelivery.js';
import { Segments1763900000000 } from './1763900000000-Segments.js';
import { Campaigns1763910000000 } from './1763910000000-Campaigns.js';
import { Workflows1763920000000 } from './1763920000000-Workflows.js';
import { ContactCounts1763930000000 } from './1763930000000-ContactCounts.js';
import { WorkflowRunSafety1763941000000 } from './1763941000000-WorkflowRunSafety.js';
import { EngagementAnalytics1763950000000 } from './1763950000000-EngagementAnalytics.js';
import { Deliverability1763960000000 } from './1763960000000-Deliverability.js';
import { FairSending1763963000000 } from './1763963000000-FairSending.js';

/** Every migration, in order. Explicit imports: ESM builds have no glob loading. */
export const MAIL_MIGRATIONS = [
  Projects1763790000000,
  ContactsAndEvents1763800000000,
  MailDelivery1763850000000,
  Segments1763900000000,
  Campaigns1763910000000,
  Workflows1763920000000,
  ContactCounts1763930000000,
  WorkflowRunSafety1763941000000,
  EngagementAnalytics1763950000000,
  Deliverability1763960000000,
  FairSending1763963000000,
];
