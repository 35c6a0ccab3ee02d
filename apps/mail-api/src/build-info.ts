import { createRequire } from 'node:module';

/** The app's version from its package.json (`src/` and `dist/` sit next to it): `build_info{version}`. */
export const APP_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
