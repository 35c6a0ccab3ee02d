/**
 * A queue belongs to the module that processes it (`<feature>.queue.ts` in its app). What stays here
 * is what both apps and service-kit share: the worker heartbeat every maintenance queue answers.
 */
export const MaintenanceJob = {
  /** Records that a worker of this deployment is alive and consuming; used by the round-trip check. */
  WorkerHeartbeat: 'worker.heartbeat',
} as const;

export interface WorkerHeartbeatPayload {
  /** Who asked: a probe id, so the caller can find its own answer. */
  probeId: string;
  requestedAt: string;
}
