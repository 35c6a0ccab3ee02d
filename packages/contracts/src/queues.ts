/**
 * Queue names and job payloads, shared by the producers (APIs) and the processors (workers).
 * A job name is `<queue>` scoped: processors register for (queue, name) pairs.
 */
export const PlatformQueue = {
  /** Housekeeping jobs of the platform (expired sessions and tokens, ...). */
  Maintenance: 'platform-maintenance',
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
