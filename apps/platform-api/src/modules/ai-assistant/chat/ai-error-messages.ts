import { Logger } from '@nestjs/common';
import { APICallError, RetryError } from 'ai';
import { DomainError } from '@app/service-kit';

const logger = new Logger('AiRuntime');

/** A tool's failure whose message is meant for the user and the model (a domain message, a limit). */
export class ToolExecutionError extends Error {
  override readonly name = 'ToolExecutionError';
}

const isAbort = (err: unknown) => err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');

/**
 * Whose base URL a run calls: `deployment` (AI_*_BASE_URL) or `chosen` (a tenant's settings or a
 * request's `baseUrl`). A failure talking to a chosen URL reads the same whatever happened (refused,
 * reset, not HTTP, an HTTP error status, a private address refused), so the platform cannot be used
 * to learn which hosts and ports answer inside its network.
 */
export type ProviderEndpoint = 'deployment' | 'chosen';

export const CHOSEN_ENDPOINT_FAILURE = 'the AI provider at the chosen base URL could not be used';

/**
 * What a client is told about a failure inside a run (the stream's `error` part): domain and tool
 * messages as they are, a provider's failure by its status only (its body may echo the request),
 * anything else masked. Never the key, the prompt or the provider's answer.
 */
export function clientErrorMessage(err: unknown, endpoint: ProviderEndpoint = 'deployment'): string {
  if (RetryError.isInstance(err)) return clientErrorMessage(err.lastError, endpoint);
  if (err instanceof DomainError || err instanceof ToolExecutionError) return err.message;
  if (isAbort(err)) return 'the turn was stopped';
  if (endpoint === 'chosen') return CHOSEN_ENDPOINT_FAILURE;
  if (APICallError.isInstance(err))
    return err.statusCode ? `the AI provider answered ${err.statusCode}` : 'the AI provider could not be reached';
  return 'An error occurred.';
}

/** The run's own log line for a failure (instead of the SDK's console dump, which holds the request). */
export function logRunError(err: unknown): void {
  if (RetryError.isInstance(err)) {
    logRunError(err.lastError);
  } else if (APICallError.isInstance(err)) {
    logger.warn({ status: err.statusCode, url: err.url }, 'AI provider call failed');
  } else if (!(err instanceof DomainError || err instanceof ToolExecutionError || isAbort(err))) {
    logger.error({ err: err instanceof Error ? err.message : String(err) }, 'AI run failed');
  }
}

/** For a stream's own `onError`: log, then the client's message. */
export function reportStreamError(err: unknown, endpoint: ProviderEndpoint = 'deployment'): string {
  logRunError(err);
  return clientErrorMessage(err, endpoint);
}
