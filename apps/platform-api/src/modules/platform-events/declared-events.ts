import type { EventDeclaration } from '../../core/events/event-declarations.js';
import { NOTIFICATION_EVENTS } from '../notifications/notifications.events.js';
import { AI_ASSISTANT_EVENTS } from '../ai-assistant/ai-assistant.declarations.js';
import { ATTACHMENT_EVENTS } from '../attachments/attachments.declarations.js';
import { AUTH_EVENTS } from './module-events.js';

/** Every module's declared events. Add a module's list here when it declares some. */
export const DECLARED_EVENTS: EventDeclaration[] = [...AUTH_EVENTS, ...ATTACHMENT_EVENTS, ...NOTIFICATION_EVENTS, ...AI_ASSISTANT_EVENTS];

const CLIENT_BROADCAST = new Set(DECLARED_EVENTS.filter((e) => e.clientBroadcast).map((e) => e.id));

/** Events browsers receive on `GET /events/stream` (and so what the event journal keeps for reconnects). */
export const isClientBroadcastEvent = (id: string): boolean => CLIENT_BROADCAST.has(id);
