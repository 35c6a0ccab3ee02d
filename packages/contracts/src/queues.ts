/**
 * Queue names and job payloads, shared by the producers (APIs) and the processors (workers).
 * A job name is `<queue>` scoped: processors register for (queue, name) pairs.
 */
export const PlatformQueue = {
  /** Housekeeping jobs of the platform (expired sessions and tokens, ...). */
  Maintenance: 'platform-maintenance',
  /** Account emails: password-reset requests and outgoing messages through the mail-api. */
  AccountEmail: 'platform-account-email',
} as const;
export type PlatformQueue = (typeof PlatformQueue)[keyof typeof PlatformQueue];

export const MailQueue = {
  /** Housekeeping jobs of the mail service. */
  Maintenance: 'mail-maintenance',
  /**
   * Outgoing emails, one job per email row. One queue whatever the source (transactional sends,
   * campaigns, workflows): its BullMQ limiter is the deployment-wide MAIL_RATE_PER_SECOND.
   */
  Email: 'mail-email',
} as const;
export type MailQueue = (typeof MailQueue)[keyof typeof MailQueue];

export const MaintenanceJob = {
  /** Records that a worker of this deployment is alive and consuming; used by the round-trip check. */
  WorkerHeartbeat: 'worker.heartbeat',
} as const;

export interface WorkerHeartbeatPayload {
  /** Who asked: a probe id, so the caller can find its own answer. */
  probeId: string;
  requestedAt: string;
}

export const PlatformMaintenanceJob = {
  /** Delete expired sessions and one-time tokens, and notifications long past their expiry (repeatable). */
  PurgeExpired: 'housekeeping.purge-expired',
} as const;

export const AccountEmailJob = {
  /** Resolve the account behind a reset request, issue a token and send the link (or nothing). */
  PasswordResetRequested: 'auth.password-reset.requested',
  /** Deliver one message through the mail-api's /v1/send (idempotent by job id). */
  Send: 'email.send',
} as const;

export interface PasswordResetRequestedPayload {
  email: string;
  /** Restricts the lookup to one tenant when the client named it. */
  tenantId: string | null;
  requestedAt: string;
  ip: string | null;
}

export interface AccountEmailPayload {
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Why it is sent (`password_reset`, `invitation`), for logs. */
  kind: string;
  /** Sender; defaults to PLATFORM_MAIL_FROM (notification settings may name their own). */
  from?: string | null;
}

/** Notifications (issue 5): role/feature fan-out and the emails of notifications. */
export const PlatformNotificationsQueue = 'platform-notifications' as const;

export const NotificationJob = {
  /** Resolve the recipients of a role or feature notification and write their rows in chunks. */
  FanOut: 'notifications.fan-out',
  /** Queue one email per notification of a batch (the tenant's email strategy is enabled). */
  Email: 'notifications.email',
} as const;

/** The content of a notification, as given by its sender (every recipient gets the same). */
export interface NotificationContent {
  type: string;
  severity: 'info' | 'warning' | 'success' | 'error';
  title: string;
  body: string | null;
  titleKey: string | null;
  bodyKey: string | null;
  titleVariables: Record<string, unknown> | null;
  bodyVariables: Record<string, unknown> | null;
  icon: string | null;
  actions: { id: string; label: string }[];
  sourceModule: string | null;
  sourceEntityType: string | null;
  sourceEntityId: string | null;
  linkHref: string | null;
  groupKey: string | null;
  /** ISO 8601; null: never expires. */
  expiresAt: string | null;
}

export type NotificationFanOutTarget = { kind: 'role'; roleId: string } | { kind: 'feature'; requiredFeature: string };

export interface NotificationFanOutPayload {
  /** Generated per request; unique (batch, recipient) makes a retried or duplicated job a no-op. */
  batchId: string;
  tenantId: string;
  createdByUserId: string | null;
  target: NotificationFanOutTarget;
  content: NotificationContent;
  requestedAt: string;
}

export interface NotificationEmailPayload {
  tenantId: string;
  batchId: string;
}

export const MailEmailJob = {
  /** Deliver one email row (idempotent on the email id: a SENT or FAILED row is never sent again). */
  Deliver: 'email.deliver',
} as const;

export interface MailEmailDeliverPayload {
  emailId: string;
  projectId: string;
}

/**
 * BullMQ priorities of the email queue (lower runs first): transactional mail overtakes queued
 * campaign and workflow mail.
 */
export const MailEmailPriority = {
  Transactional: 1,
  Workflow: 5,
  Campaign: 10,
} as const;

export const MailMaintenanceJob = {
  /** Recheck the DNS records of pending domains (repeatable). */
  RecheckDomains: 'domains.recheck',
  /** Re-enqueue QUEUED emails whose job is missing (Redis lost) and release stale SENDING claims (repeatable). */
  RequeueEmails: 'emails.requeue',
  /** Delete Idempotency-Key records older than 24 h (repeatable). */
  PurgeIdempotencyKeys: 'idempotency.purge',
  /** Delete the attachments of send requests whose emails are all finished (repeatable). */
  PurgeSendRequests: 'send-requests.purge',
} as const;
