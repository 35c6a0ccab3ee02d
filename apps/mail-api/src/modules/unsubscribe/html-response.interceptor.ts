import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { tap, type Observable } from 'rxjs';
import { PAGE_HEADERS } from './unsubscribe-pages.js';

/**
 * Marks a successful answer that is a string as an HTML page (with the pages' security headers); other
 * answers stay JSON. Not `@Header()`: that is set before the handler runs, so an error envelope would go
 * out labelled text/html too. Through the adapter, not Express directly.
 */
@Injectable()
export class HtmlResponseInterceptor implements NestInterceptor {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const res = context.switchToHttp().getResponse<unknown>();
    const adapter = this.adapterHost.httpAdapter;
    return next.handle().pipe(
      tap((value) => {
        if (typeof value !== 'string') return;
        adapter.setHeader(res, 'Content-Type', 'text/html; charset=utf-8');
        for (const [name, headerValue] of Object.entries(PAGE_HEADERS)) adapter.setHeader(res, name, headerValue);
      }),
    );
  }
}
