import type { ProjectKeyKind } from './project-keys.js';

/**
 * Who is calling: the project the API key belongs to. Every service method that touches project data
 * takes it first, and every query filters by `id`.
 */
export interface ProjectContext {
  id: string;
  name: string;
  /** Which key was presented: public keys only reach routes marked `@PublicKeyAllowed()`. */
  keyKind: ProjectKeyKind;
}

/** Where the guard leaves the context on the request. */
export const PROJECT_CONTEXT_PROPERTY = 'mailProject';
