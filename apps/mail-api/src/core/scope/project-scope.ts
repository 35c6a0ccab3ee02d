import type { ProjectContext } from '../auth/project-context.js';

/**
 * Whose data a call may touch: the one scope value every repository method that reads or writes
 * project data takes, always second, `(db, scope, input)`. Every such query filters by `projectId`;
 * an id of another project is a 404, never a leak.
 */
export interface ProjectScope {
  readonly projectId: string;
}

/** The scope of a request authenticated by a project key. */
export function scopeOf(project: ProjectContext): ProjectScope {
  return { projectId: project.id };
}

/** The scope of a job working on one project's data (the payload names the project). */
export function projectScope(projectId: string): ProjectScope {
  return { projectId };
}
