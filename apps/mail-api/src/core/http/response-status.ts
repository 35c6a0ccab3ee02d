import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { map, type Observable } from 'rxjs';

/** A handler result whose HTTP status depends on what happened (e.g. 201 created / 200 updated). */
export class WithStatus<T> {
  constructor(
    readonly status: number,
    readonly body: T,
  ) {}
}

/**
 * Unwraps `WithStatus` results and sets their status through the HTTP adapter, so controllers choose a
 * status without touching the response object. Apply per route with `@UseInterceptors`.
 */
@Injectable()
export class ResponseStatusInterceptor implements NestInterceptor {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown): unknown => {
        if (!(result instanceof WithStatus)) return result;
        this.adapterHost.httpAdapter.status(context.switchToHttp().getResponse(), result.status);
        return result.body;
      }),
    );
  }
}
