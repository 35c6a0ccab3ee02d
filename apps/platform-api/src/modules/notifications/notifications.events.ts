import { declareEvent, type EventDeclaration } from '../../core/events/event-declarations.js';
import { PlatformEventId } from '../../core/events/event-ids.js';

/** Events of the notifications module (GET /events). */
export const NOTIFICATION_EVENTS: EventDeclaration[] = [
  // Broadcast to the recipient's open streams (the bell updates live). Not a trigger: an automation
  // that sends a notification when one is created would feed itself.
  declareEvent('notifications', 'crud', PlatformEventId.NotificationCreated, 'Notification created', {
    clientBroadcast: true,
    excludeFromTriggers: true,
  }),
  // For the module that owns the notification's source entity: the recipient chose an action.
  declareEvent('notifications', 'lifecycle', PlatformEventId.NotificationActioned, 'Notification action taken'),
];
