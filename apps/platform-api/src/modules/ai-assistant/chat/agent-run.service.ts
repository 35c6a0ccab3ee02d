import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { LanguageModel, ModelMessage } from 'ai';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf, type TenantScope } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition, ExecutionMode, MutationPolicy } from '../agents/agent-definition.js';
import { type LoopLimits, loopLimits } from '../agents/agent-loop-limits.js';
import { AgentLoopOverrideService } from '../overrides/agent-loop-override.service.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { MutationPolicyService } from '../overrides/mutation-policy.service.js';
import { PromptOverrideService } from '../overrides/prompt-override.service.js';
import { AiProviderRegistry } from '../providers/ai-provider-registry.js';
import { TokenBudgetService } from '../usage/token-budget.service.js';
import { type ResolvedRuntime, type RuntimeOverrides, RuntimeResolver } from '../settings/runtime-resolver.service.js';
import { ChatAttachmentsRepository } from './chat-attachments.repository.js';
import type { ChatMessageDto } from './chat.dto.js';

export interface RunRequest {
  agentId: string;
  messages: ChatMessageDto[];
  sessionId?: string;
  attachmentIds?: string[];
  overrides?: RuntimeOverrides;
  loopBudget?: number;
}

/** Everything a run needs, checked: the agent, the caller's right to it, the model, prompt and limits. */
export interface PreparedRun {
  auth: AuthContext;
  scope: TenantScope;
  agent: AgentDefinition;
  runtime: ResolvedRuntime;
  model: LanguageModel;
  system: string;
  messages: ModelMessage[];
  limits: LoopLimits;
  policy: MutationPolicy;
  sessionId: string;
  attachmentIds: string[];
}

/** 409 (chat) / 422 (run-object): the agent does not run in the requested mode. */
function modeError(agent: AgentDefinition, mode: ExecutionMode): DomainError {
  const message = `agent ${agent.id} runs in ${agent.executionMode} mode, not ${mode}`;
  return new DomainError('execution_mode_not_supported', message, { status: mode === 'object' ? 422 : 409 });
}

/**
 * The checks and lookups chat and run-object share (platform-api.md "Rules for chat"): the agent exists
 * (404) and the caller holds its features (403), it runs in this mode (chat 409, run-object 422), the
 * attachments are the tenant's and of media types it accepts (409), the provider, model and base URL
 * resolve (typed 400s), and neither the tenant nor the user has used its daily token budget (429). The
 * tenant's mutation policy, prompt override, loop override and today's spend are read in parallel:
 * every check happens before the first byte is streamed.
 */
@Injectable()
export class AgentRunService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly providers: AiProviderRegistry,
    private readonly resolver: RuntimeResolver,
    private readonly policies: MutationPolicyService,
    private readonly prompts: PromptOverrideService,
    private readonly loopOverrides: AgentLoopOverrideService,
    private readonly attachments: ChatAttachmentsRepository,
    private readonly budgets: TokenBudgetService,
  ) {}

  async prepare(auth: AuthContext, mode: ExecutionMode, request: RunRequest): Promise<PreparedRun> {
    const agent = this.registry.getOrThrow(request.agentId, { checkFormat: true });
    if (!auth.can(...agent.requiredFeatures))
      throw DomainError.forbidden(`missing required features: ${agent.requiredFeatures.join(', ')}`);
    if (agent.executionMode !== mode) throw modeError(agent, mode);
    const scope = scopeOf(auth);
    const attachmentIds = [...new Set(request.attachmentIds ?? [])];
    const [runtime, policy, sections, loopOverride, , overBudget] = await Promise.all([
      this.resolver.resolve(scope, agent, request.overrides ?? {}),
      this.policies.effective(scope, agent.id),
      this.prompts.currentSections(scope, agent.id, auth.organizationId),
      this.loopOverrides.values(scope, agent.id),
      this.checkAttachments(scope, agent, attachmentIds),
      this.budgets.refusal(scope),
    ]);
    // 429 once the request is otherwise valid (its 400s, 404s and 409s first), before any provider call.
    if (overBudget) throw overBudget;
    // Read once every check has passed: an agent's context may be data access (logged as such).
    const context = agent.context ? await agent.context({ auth }) : null;
    return {
      auth,
      scope,
      agent,
      runtime,
      model: this.providers.languageModel(runtime),
      system: systemPrompt(agent, sections, policy, context),
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      limits: loopLimits(loopOverride, request.loopBudget),
      policy,
      sessionId: request.sessionId ?? randomUUID(),
      attachmentIds,
    };
  }

  /** Another tenant's (or an unknown) attachment is a 404; a media type the agent does not accept, 409. */
  private async checkAttachments(scope: TenantScope, agent: AgentDefinition, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const found = await this.attachments.mediaTypes(this.dataSource, scope, ids);
    if (found.length !== ids.length) throw DomainError.notFound('attachment not found');
    const refused = found.find((a) => !mediaTypeAccepted(agent.acceptedMediaTypes, a.mimeType));
    if (refused) {
      throw new DomainError('media_type_not_accepted', `agent ${agent.id} does not accept attachments of type ${refused.mimeType}`, {
        status: 409,
      });
    }
  }
}

/** `image/*` accepts every image type; anything else matches exactly (case-insensitive). */
export function mediaTypeAccepted(accepted: string[], mimeType: string): boolean {
  const type = mimeType.toLowerCase();
  return accepted.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.endsWith('/*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern;
  });
}

/**
 * The agent's prompt sections, each replaced by the tenant's override of the same id (new ids are
 * added), then the policy in effect and the agent's live context.
 */
function systemPrompt(
  agent: AgentDefinition,
  override: Record<string, string> | null,
  policy: MutationPolicy,
  context: string | null,
): string {
  const sections = { ...agent.promptSections, ...(override ?? {}) };
  const parts = Object.values(sections).filter((text) => text.trim().length > 0);
  if (agent.tools.some((t) => t.kind === 'mutation')) {
    parts.push(
      policy === 'read-only'
        ? 'You may not change anything in this tenant: answer from what you can read.'
        : 'Changes you propose are never applied directly: each one waits for the user to confirm it.',
    );
  }
  if (context) parts.push(context);
  return parts.join('\n\n');
}
