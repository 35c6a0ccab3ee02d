import type { Request, Response } from 'express';

/** A write the dashboard allows to callers who may write: nothing else changes a queue. */
export interface QueueDashboardWrite {
  /** `retry` (failed/completed jobs back to waiting), `promote` (delayed jobs now), `clean` (remove finished jobs). */
  action: 'retry' | 'promote' | 'clean';
  queue: string;
  /** One job, or null for every job of `status` (retry, clean) or every delayed job (promote). */
  jobId: string | null;
  /** The job state a bulk retry or clean applies to (`failed`, `completed`, ...). */
  status: string | null;
}

/**
 * Who may use the queue dashboard, who may write, and where writes are recorded: an injectable
 * class of the app (the platform's super administrators and action log; the mail admin tokens).
 */
export interface QueueDashboardAccess {
  /** Throws a `DomainError` (401, 403) to refuse the caller any use of the dashboard. */
  authorize(req: Request, res: Response): void | Promise<void>;
  /** Whether this (authorized) caller may run the writes; others get the read-only board. */
  canWrite(req: Request): boolean | Promise<boolean>;
  /** Records an allowed write before it runs; a throw refuses the write (no unrecorded write). */
  recordWrite(req: Request, write: QueueDashboardWrite): Promise<void>;
}

const SEGMENT = /^[^/]+$/;

/**
 * The write a request asks for (method + path relative to `/admin/queues`), or null when it is not
 * one of the allowed ones: obliterate, empty, add, edit job data, delay, priority, pause, resume,
 * concurrency, rate limits and job schedulers are never allowed through the dashboard.
 */
export function allowedDashboardWrite(method: string, relativePath: string): QueueDashboardWrite | null {
  if (method.toUpperCase() !== 'PUT') return null;
  const parts = relativePath.split('?')[0].split('/').filter(Boolean).map(decodeSegment);
  if (parts.length < 4 || parts[0] !== 'api' || parts[1] !== 'queues' || !parts.every((p) => p !== null && SEGMENT.test(p))) return null;
  const [, , queue, a, b] = parts as string[];
  if (parts.length === 4 && a === 'promote') return { action: 'promote', queue, jobId: null, status: null };
  if (parts.length !== 5) return null;
  if (a === 'retry' || a === 'clean') return { action: a, queue, jobId: null, status: b };
  if (b === 'retry' || b === 'promote' || b === 'clean') return { action: b, queue, jobId: a, status: null };
  return null;
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
