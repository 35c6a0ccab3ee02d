import { CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';

const UNDO_TOKEN = Symbol('undoToken');

/** Attaches an undo token to a service result; the interceptor turns it into `X-Undo-Token`. */
export function withUndoToken<T extends object>(result: T, undoToken: string | null): T {
  if (undoToken) Object.defineProperty(result, UNDO_TOKEN, { value: undoToken, enumerable: false });
  return result;
}

export function undoTokenOf(result: unknown): string | null {
  return result && typeof result === 'object' ? ((result as Record<symbol, string>)[UNDO_TOKEN] ?? null) : null;
}

/** Every write response of an undoable command carries its `X-Undo-Token` header (see `ReturnsUndoTokens`). */
@Injectable()
export class UndoTokenInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Reads never carry a token: leave the hot read path without the extra operator.
    const method = context.switchToHttp().getRequest<{ method: string }>().method;
    if (method === 'GET' || method === 'HEAD') return next.handle();
    return next.handle().pipe(
      map((result: unknown) => {
        const token = undoTokenOf(result);
        if (token) context.switchToHttp().getResponse<Response>().setHeader('X-Undo-Token', token);
        return result;
      }),
    );
  }
}

/**
 * On every controller whose routes run commands: their responses carry `X-Undo-Token`. Per
 * controller rather than global, because an interceptor on every route (probes, reads, logins) costs
 * a measurable share of each small request; `test/data-access-shape.spec.ts` checks none is missed.
 */
export const ReturnsUndoTokens = (): ClassDecorator & MethodDecorator => UseInterceptors(UndoTokenInterceptor);
