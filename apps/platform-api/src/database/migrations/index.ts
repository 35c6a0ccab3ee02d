import { AccountsFoundation1763780000000 } from './1763780000000-AccountsFoundation.js';
import { AiAssistantActions1763920000000 } from './1763920000000-AiAssistantActions.js';
import { AiAssistantRuntime1763910000000 } from './1763910000000-AiAssistantRuntime.js';
import { AccessControl1763790000000 } from './1763790000000-AccessControl.js';
import { Attachments1763900000000 } from './1763900000000-Attachments.js';
import { AttachmentVariants1763937000000 } from './1763937000000-AttachmentVariants.js';
import { AttachmentStorageDeletions1763938000000 } from './1763938000000-AttachmentStorageDeletions.js';
import { AiTenantProviderKeys1763939100000 } from './1763939100000-AiTenantProviderKeys.js';
import { AiUsageBudgetIndex1763939200000 } from './1763939200000-AiUsageBudgetIndex.js';
import { AiPendingActionLease1763939300000 } from './1763939300000-AiPendingActionLease.js';
import { AiSessionKeyLoginSession1763939400000 } from './1763939400000-AiSessionKeyLoginSession.js';
import { AuditLogs1763810000000 } from './1763810000000-AuditLogs.js';
import { AuditWritePath1763840000000 } from './1763840000000-AuditWritePath.js';
import { AuthTokenSealedLink1763870000000 } from './1763870000000-AuthTokenSealedLink.js';
import { Housekeeping1763860000000 } from './1763860000000-Housekeeping.js';
import { Notifications1763830000000 } from './1763830000000-Notifications.js';

/** Every migration, in order. Explicit imports: ESM builds have no glob loading. */
export const PLATFORM_MIGRATIONS = [
  AccountsFoundation1763780000000,
  AccessControl1763790000000,
  AuditLogs1763810000000,
  Notifications1763830000000,
  AuditWritePath1763840000000,
  Housekeeping1763860000000,
  AuthTokenSealedLink1763870000000,
  Attachments1763900000000,
  AiAssistantRuntime1763910000000,
  AiAssistantActions1763920000000,
  AttachmentVariants1763937000000,
  AttachmentStorageDeletions1763938000000,
  AiTenantProviderKeys1763939100000,
  AiUsageBudgetIndex1763939200000,
  AiPendingActionLease1763939300000,
  AiSessionKeyLoginSession1763939400000,
];
