import { Injectable } from '@nestjs/common';
import { APICallError, generateObject, NoObjectGeneratedError, RetryError, type Schema, zodSchema } from 'ai';
import { CHOSEN_ENDPOINT_FAILURE, logRunError } from './ai-error-messages.js';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { AiUsageService } from '../usage/ai-usage.service.js';
import { AgentRunService, type PreparedRun, type RunRequest } from './agent-run.service.js';

/** Each agent's object schema as the SDK takes it, built once (its JSON Schema is converted once). */
const objectSchemas = new WeakMap<object, Schema<unknown>>();

function sdkObjectSchema(schema: NonNullable<PreparedRun['agent']['objectSchema']>): Schema<unknown> {
  let sdk = objectSchemas.get(schema);
  if (!sdk) {
    sdk = zodSchema<unknown>(schema);
    objectSchemas.set(schema, sdk);
  }
  return sdk;
}

export interface RunObjectResult {
  object: unknown;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
  finishReason?: string;
}

/**
 * POST /ai_assistant/ai/run-object: one model call whose JSON (requested with the agent's schema as
 * `response_format: json_schema`) is validated against that schema. Invalid JSON, or JSON the schema
 * refuses, is 502 `invalid_model_output`; a provider failure 502 `provider_error` (at a base URL other than the
 * deployment's, one message whatever failed); the wall clock 504.
 */
@Injectable()
export class RunObjectService {
  constructor(
    private readonly runs: AgentRunService,
    private readonly usage: AiUsageService,
  ) {}

  async run(auth: AuthContext, request: RunRequest): Promise<RunObjectResult> {
    const run = await this.runs.prepare(auth, 'object', request);
    const schema = run.agent.objectSchema;
    if (!schema) throw new Error(`agent ${run.agent.id} declares object mode without an objectSchema`);
    const deadline = AbortSignal.timeout(run.limits.maxWallClockMs);
    try {
      const result = await generateObject({
        model: run.model,
        system: run.system,
        messages: run.messages,
        schema: sdkObjectSchema(schema),
        schemaName: run.agent.id.replace(/\./g, '_'),
        abortSignal: deadline,
        maxRetries: 1,
      });
      const usage = tokens(result.usage);
      await this.record(run, usage, result.finishReason);
      return { object: result.object, usage, finishReason: result.finishReason };
    } catch (err) {
      throw await this.failure(run, err, deadline);
    }
  }

  private async failure(run: PreparedRun, caught: unknown, deadline: AbortSignal): Promise<unknown> {
    const err = RetryError.isInstance(caught) ? caught.lastError : caught;
    logRunError(err);
    if (NoObjectGeneratedError.isInstance(err)) {
      // The model answered (and was paid for): its step is usage too.
      await this.record(run, tokens(err.usage), err.finishReason ?? null);
      return new DomainError('invalid_model_output', 'the model’s answer does not match the agent’s schema', { status: 502 });
    }
    if (deadline.aborted) return new DomainError('wall_clock_exceeded', 'the run exceeded its wall-clock limit', { status: 504 });
    // A chosen base URL: every failure reads the same (whether or not a host or port answered).
    if (run.runtime.baseUrl !== null && !(err instanceof DomainError)) {
      return new DomainError('provider_error', CHOSEN_ENDPOINT_FAILURE, { status: 502 });
    }
    if (APICallError.isInstance(err)) {
      const message = err.statusCode ? `the AI provider answered ${err.statusCode}` : 'the AI provider could not be reached';
      return new DomainError('provider_error', message, { status: 502 });
    }
    return err;
  }

  private record(run: PreparedRun, usage: { inputTokens: number; outputTokens: number }, finishReason: string | null): Promise<void> {
    return this.usage.record(run.auth, {
      agentId: run.agent.id,
      providerId: run.runtime.providerId,
      modelId: run.runtime.modelId,
      sessionId: run.sessionId,
      stepIndex: 0,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      finishReason,
    });
  }
}

function tokens(usage: { inputTokens?: number; outputTokens?: number } | undefined) {
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}
