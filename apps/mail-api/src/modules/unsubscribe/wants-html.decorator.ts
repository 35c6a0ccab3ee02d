import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/**
 * Whether the client asked for an HTML answer (a browser submitting the confirmation page's form) rather
 * than being a mail client's one-click POST. A custom decorator, not `@Headers('accept')`, which the
 * OpenAPI document would list as a required header.
 */
export const WantsHtml = createParamDecorator((_data: unknown, ctx: ExecutionContext): boolean => {
  const accept = ctx.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers.accept;
  return /\btext\/html\b/i.test(String(accept ?? ''));
});
