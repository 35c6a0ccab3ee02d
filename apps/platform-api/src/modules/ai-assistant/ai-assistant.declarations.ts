import { declareEvent, type EventDeclaration } from '../../core/events/event-declarations.js';
import { PlatformEventId as E } from '../../core/events/event-ids.js';
import type { ModuleDeclaration } from '../../core/features/declarations.js';

export const AI_ASSISTANT_VIEW = 'ai_assistant.view';
export const AI_ASSISTANT_SETTINGS_MANAGE = 'ai_assistant.settings.manage';

/** Features of the AI assistant (platform-api.md "AI assistant"); its screens are the client's, no navigation declared yet. */
export const AI_ASSISTANT_MODULE: ModuleDeclaration = {
  id: 'ai_assistant',
  title: 'AI assistant',
  features: [
    { id: AI_ASSISTANT_VIEW, title: 'Use the AI assistant (agents, chat, pending actions)' },
    { id: AI_ASSISTANT_SETTINGS_MANAGE, title: 'Manage AI providers, agent overrides and usage reports' },
  ],
};

/** Events of pending AI actions (GET /events): one per transition, emitted once by the actions module. */
export const AI_ASSISTANT_EVENTS: EventDeclaration[] = [
  declareEvent('ai_assistant', 'crud', E.AiActionCreated, 'AI action proposed'),
  declareEvent('ai_assistant', 'lifecycle', E.AiActionConfirmed, 'AI action confirmed'),
  declareEvent('ai_assistant', 'lifecycle', E.AiActionCancelled, 'AI action cancelled'),
  declareEvent('ai_assistant', 'lifecycle', E.AiActionExpired, 'AI action expired'),
  declareEvent('ai_assistant', 'lifecycle', E.AiActionFailed, 'AI action failed'),
];
