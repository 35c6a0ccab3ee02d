import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { tap, type Observable } from 'rxjs';

/**
 * Marks a successful answer as HTML. Not `@Header()`: that is set before the handler runs, so an
 * error envelope would go out labelled text/html too. Through the adapter, not Express directly.
 */
@Injectable()
export class HtmlResponseInterceptor implements NestInterceptor {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const res = context.switchToHttp().getResponse();
    return next.handle().pipe(tap(() => this.adapterHost.httpAdapter.setHeader(res, 'Content-Type', 'text/html; charset=utf-8')));
  }
}
