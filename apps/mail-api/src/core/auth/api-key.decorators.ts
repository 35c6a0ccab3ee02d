import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { PROJECT_CONTEXT_PROPERTY, type ProjectContext } from './project-context.js';

export { Public, PUBLIC_ROUTE } from '@app/service-kit';

export const PUBLIC_KEY_ALLOWED = 'mail:public-key-allowed';

/** The route also accepts the project's public key (`pk_`); without this, only the secret key works. */
export const PublicKeyAllowed = () => SetMetadata(PUBLIC_KEY_ALLOWED, true);

/** The calling project, set by the ApiKeyGuard. */
export const CurrentProject = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): ProjectContext =>
    // The request is the first HTTP argument: `switchToHttp()` would attach three closures to the context per call.
    ctx.getArgByIndex<Record<string, ProjectContext>>(0)[PROJECT_CONTEXT_PROPERTY],
);
