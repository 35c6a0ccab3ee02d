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
}
