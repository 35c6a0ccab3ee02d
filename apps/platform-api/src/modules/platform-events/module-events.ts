import { declareEvent, type EventDeclaration } from '../../core/events/event-declarations.js';
import { PlatformEventId as E } from '../../core/events/event-ids.js';

// Declarations of modules that do not keep their own events file yet (auth). They
// belong beside each module's feature declarations; move them there when a module owns its file.

export const AUTH_EVENTS: EventDeclaration[] = [
  declareEvent('auth', 'lifecycle', E.LoginSuccess, 'User logged in'),
  // Attacker-driven volume: not offered as an automation trigger.
  declareEvent('auth', 'lifecycle', E.LoginFailed, 'Login failed', { excludeFromTriggers: true }),
  declareEvent('auth', 'lifecycle', E.Logout, 'User logged out'),
  declareEvent('auth', 'lifecycle', E.PasswordResetRequested, 'Password reset requested'),
  declareEvent('auth', 'lifecycle', E.PasswordResetCompleted, 'Password reset completed'),
  declareEvent('auth', 'crud', E.UserCreated, 'User created'),
  declareEvent('auth', 'crud', E.UserUpdated, 'User updated'),
  declareEvent('auth', 'crud', E.UserDeleted, 'User deleted'),
  declareEvent('auth', 'crud', E.RoleCreated, 'Role created'),
  declareEvent('auth', 'crud', E.RoleUpdated, 'Role updated'),
  declareEvent('auth', 'crud', E.RoleDeleted, 'Role deleted'),
];
