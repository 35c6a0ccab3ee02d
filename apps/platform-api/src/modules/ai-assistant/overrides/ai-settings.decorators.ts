import { applyDecorators, Controller } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiNotFoundResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ReturnsUndoTokens } from '../../../core/audit/undo-token.js';
import { RequireFeatures } from '../../../core/auth/auth.decorators.js';
import { ErrorDto } from '../../../core/http/common.dto.js';

/**
 * A controller of the AI assistant's tenant settings (runtime settings, the per-agent overrides):
 * tagged `ai_assistant`, bearer-authenticated (the 401 every route can answer), and every write
 * undoable, so each answers with its `X-Undo-Token`. `responses`: what all its routes also document.
 */
export function AiSettingsController(path: string, ...responses: ClassDecorator[]): ClassDecorator {
  return applyDecorators(
    ApiTags('ai_assistant'),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' }),
    ...responses,
    ReturnsUndoTokens(),
    Controller(path),
  );
}

/** A tenant's override of one agent, at /ai_assistant/ai/agents/{agentId}/{resource}: 404 for an unknown agent. */
export function AgentOverrideController(resource: string, ...responses: ClassDecorator[]): ClassDecorator {
  return AiSettingsController(
    `ai_assistant/ai/agents/:agentId/${resource}`,
    ApiNotFoundResponse({ type: ErrorDto, description: 'Unknown agent.' }),
    ...responses,
  );
}

/** The feature a route requires, and the 403 it documents for a caller without it. */
export function RequireAiSettingsFeature(feature: string): MethodDecorator {
  return applyDecorators(RequireFeatures(feature), ApiForbiddenResponse({ type: ErrorDto, description: `Missing ${feature}.` }));
}
