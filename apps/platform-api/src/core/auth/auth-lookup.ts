import { Logger } from '@nestjs/common';
import { DomainError } from '@app/service-kit';
import { serviceUnavailable } from '../errors/service-unavailable.js';

const logger = new Logger('Authentication');

/**
 * Runs what deciding who the caller is depends on (the session, the ACL, an AI session key). Its own
 * verdicts (DomainErrors: 401 for an ended session) pass through; any other failure is the database
 * failing, not the caller: it must never read as "not authenticated" (401, which sends a client to
 * the login page) nor as a bug (500), so it becomes 503 with Retry-After, and the cause is logged.
 */
export async function duringAuthentication<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    logger.error({ err }, 'authentication failed to load from the database; answering 503');
    throw serviceUnavailable();
  }
}
