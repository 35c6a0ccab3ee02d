import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'auth:public';

/** No authentication needed (probes, login, public lookups). Each app's auth guard honours it. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);
