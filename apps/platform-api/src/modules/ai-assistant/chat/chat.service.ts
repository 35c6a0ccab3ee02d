import { Injectable } from '@nestjs/common';
import {
  createUIMessageStream,
  type StepResult,
  stepCountIs,
  hasToolCall,
  type StopCondition as SdkStopCondition,
  streamText,
  type ToolSet,
  type UIMessageChunk,
  type UIMessageStreamWriter,
} from 'ai';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { PendingActionsService } from '../actions/pending-actions.service.js';
import { modelToolName } from '../agents/agent-definition.js';
import { AiUsageService } from '../usage/ai-usage.service.js';
import { clientErrorMessage, logRunError, type ProviderEndpoint, reportStreamError } from './ai-error-messages.js';
import { AgentRunService, type PreparedRun, type RunRequest } from './agent-run.service.js';
import { chatTools, type ToolBudget } from './chat-tools.js';

/** A chat turn's stream of UI message chunks, and how to stop it (the client went away). */
export interface ChatStream {
  stream: ReadableStream<UIMessageChunk>;
  abort(): void;
}

/** The `data-loop-limit` part: which limit ended the loop while the model still wanted to call tools. */
export interface LoopLimitData {
  reason: 'steps' | 'tool_calls' | 'tokens' | 'wall_clock' | 'stop_condition';
  limit: number | null;
}

type Steps = StepResult<ToolSet>[];

const tokensOf = (steps: Steps) =>
  steps.reduce((n, s) => n + (s.usage.totalTokens ?? (s.usage.inputTokens ?? 0) + (s.usage.outputTokens ?? 0)), 0);
const toolCallsOf = (steps: Steps) => steps.reduce((n, s) => n + s.toolCalls.length, 0);

/**
 * POST /ai_assistant/ai/chat: the agent loop (`streamText` with the run's tools) under its limits -
 * steps, tool calls, tokens (stop conditions), wall clock (an AbortSignal) - streamed as the AI SDK's
 * UI message stream. Each finished step writes a usage row.
 */
@Injectable()
export class ChatService {
  constructor(
    private readonly runs: AgentRunService,
    private readonly actions: PendingActionsService,
    private readonly usage: AiUsageService,
  ) {}

  /** Every check runs here, before the stream (and its 200) starts. */
  async open(auth: AuthContext, request: RunRequest): Promise<ChatStream> {
    const run = await this.runs.prepare(auth, 'chat', request);
    const stop = new AbortController();
    const deadline = AbortSignal.timeout(run.limits.maxWallClockMs);
    const signal = AbortSignal.any([stop.signal, deadline]);
    const endpoint = endpointOf(run);
    const stream = createUIMessageStream({
      execute: ({ writer }) => this.runLoop(run, writer, { signal, deadline }),
      onError: (err) => reportStreamError(err, endpoint),
    });
    return { stream, abort: () => stop.abort() };
  }

  private async runLoop(
    run: PreparedRun,
    writer: UIMessageStreamWriter,
    signals: { signal: AbortSignal; deadline: AbortSignal },
  ): Promise<void> {
    const budget: ToolBudget = { used: 0, max: run.limits.maxToolCalls };
    const tools = chatTools(run, { writer, actions: this.actions, budget });
    let stepIndex = 0;
    const result = streamText({
      model: run.model,
      system: run.system,
      messages: run.messages,
      tools,
      stopWhen: this.stopConditions(run),
      abortSignal: signals.signal,
      maxRetries: 1,
      onError: ({ error }) => logRunError(error),
      onStepFinish: (step) => this.recordStep(run, stepIndex++, step),
    });
    writer.merge(
      result.toUIMessageStream({
        sendFinish: false,
        onError: (err) => clientErrorMessage(err, endpointOf(run)),
        messageMetadata: ({ part }) =>
          part.type === 'start'
            ? { sessionId: run.sessionId, agentId: run.agent.id, providerId: run.runtime.providerId, modelId: run.runtime.modelId }
            : undefined,
      }),
    );
    // An aborted or failed turn rejects here; its parts (`abort`, `error`) are already in the stream.
    const steps = await Promise.resolve(result.steps).catch(() => [] as Steps);
    const finishReason = steps.at(-1)?.finishReason;
    const limit = limitReached(run, steps, signals.deadline.aborted);
    if (limit) writer.write({ type: 'data-loop-limit', data: limit });
    writer.write({ type: 'finish', ...(finishReason ? { finishReason } : {}) });
  }

  private stopConditions(run: PreparedRun): SdkStopCondition<ToolSet>[] {
    const { maxSteps, maxToolCalls, maxTokens, stopWhen } = run.limits;
    return [
      stepCountIs(maxSteps),
      ({ steps }) => toolCallsOf(steps) >= maxToolCalls,
      ({ steps }) => tokensOf(steps) >= maxTokens,
      ...stopWhen.map((c) => (c.type === 'stepCount' ? stepCountIs(c.steps) : hasToolCall(modelToolName(c.toolName)))),
    ];
  }

  private recordStep(run: PreparedRun, stepIndex: number, step: StepResult<ToolSet>): Promise<void> {
    return this.usage.record(run.auth, {
      agentId: run.agent.id,
      providerId: run.runtime.providerId,
      modelId: run.runtime.modelId,
      sessionId: run.sessionId,
      stepIndex,
      inputTokens: step.usage.inputTokens ?? 0,
      outputTokens: step.usage.outputTokens ?? 0,
      finishReason: step.finishReason,
    });
  }
}

/** A run's base URL: the deployment's own (null), or one a tenant or the request chose. */
export const endpointOf = (run: PreparedRun): ProviderEndpoint => (run.runtime.baseUrl === null ? 'deployment' : 'chosen');

/** Which limit ended the loop, if one did: the wall clock, or a stop while the model still called tools. */
function limitReached(run: PreparedRun, steps: Steps, timedOut: boolean): LoopLimitData | null {
  const { maxSteps, maxToolCalls, maxTokens, maxWallClockMs } = run.limits;
  if (timedOut) return { reason: 'wall_clock', limit: maxWallClockMs };
  if (steps.at(-1)?.finishReason !== 'tool-calls') return null;
  if (tokensOf(steps) >= maxTokens) return { reason: 'tokens', limit: maxTokens };
  if (toolCallsOf(steps) >= maxToolCalls) return { reason: 'tool_calls', limit: maxToolCalls };
  if (steps.length >= maxSteps) return { reason: 'steps', limit: maxSteps };
  return { reason: 'stop_condition', limit: null };
}
