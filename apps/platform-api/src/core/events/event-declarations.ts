/**
 * An event a module declares in code (decisions.md "Events"). `GET /events` lists these; only
 * `clientBroadcast` events reach `GET /events/stream`.
 */
export interface EventDeclaration {
  /** `<module>.<entity>.<action>`, e.g. `auth.login.success`. */
  id: string;
  label: string;
  /** `crud` (an entity changed), `lifecycle` (something happened to a session or process), `system`. */
  category: EventCategory;
  /** The declaring module's id. */
  module: string;
  /** Not offered as a trigger for automations (noisy, security-sensitive, or would loop). */
  excludeFromTriggers: boolean;
  /** Delivered to browsers through `GET /events/stream` (tenant-filtered; recipient-filtered when the event names one). */
  clientBroadcast: boolean;
}

export type EventCategory = 'crud' | 'lifecycle' | 'system';

/** Shorthand for declarations: defaults to a triggerable, server-only event. */
export function declareEvent(
  module: string,
  category: EventCategory,
  id: string,
  label: string,
  options: { excludeFromTriggers?: boolean; clientBroadcast?: boolean } = {},
): EventDeclaration {
  return {
    id,
    label,
    category,
    module,
    excludeFromTriggers: options.excludeFromTriggers ?? false,
    clientBroadcast: options.clientBroadcast ?? false,
  };
}
