/** An event emitted by a module (ids declared in the module's declarations; see GET /events). */
export interface PlatformEvent {
  /** Declared event id, e.g. `auth.login.success`. */
  id: string;
  tenantId: string | null;
  organizationId: string | null;
  /** For per-user events (notifications): only this user's stream receives it. */
  recipientUserId?: string | null;
  payload: Record<string, unknown>;
  /** Epoch milliseconds. */
  timestamp: number;
}
