/**
 * Ids of the events the platform emits (decisions.md "Events"), so emitters and declarations share
 * one spelling. Each id is declared (label, category, broadcast) by its module; see
 * `modules/platform-events/declared-events.ts`.
 */
export const PlatformEventId = {
  LoginSuccess: 'auth.login.success',
  LoginFailed: 'auth.login.failed',
  Logout: 'auth.logout',
  PasswordResetRequested: 'auth.password.reset.requested',
  PasswordResetCompleted: 'auth.password.reset.completed',
  UserCreated: 'auth.user.created',
  UserUpdated: 'auth.user.updated',
  UserDeleted: 'auth.user.deleted',
  RoleCreated: 'auth.role.created',
  RoleUpdated: 'auth.role.updated',
  RoleDeleted: 'auth.role.deleted',
  AttachmentCreated: 'attachments.attachment.created',
  AttachmentDeleted: 'attachments.attachment.deleted',
  NotificationCreated: 'notifications.notification.created',
  NotificationActioned: 'notifications.notification.actioned',
  AiActionCreated: 'ai.action.created',
  AiActionConfirmed: 'ai.action.confirmed',
  AiActionCancelled: 'ai.action.cancelled',
  AiActionExpired: 'ai.action.expired',
  AiActionFailed: 'ai.action.failed',
} as const;
export type PlatformEventId = (typeof PlatformEventId)[keyof typeof PlatformEventId];
