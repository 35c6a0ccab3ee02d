import { Injectable } from '@nestjs/common';
import { queryOne, type Db } from '@app/service-kit';
import { hashKey, keyKindOf, type ProjectKeyKind } from './project-keys.js';

/** What authentication needs of the project a key belongs to. */
export interface KeyProject {
  id: string;
  name: string;
  /** A disabled project's keys still identify it, but every request is refused (403). */
  disabled: boolean;
}

export interface ProjectKeyMatch {
  project: KeyProject;
  /** Which of the project's keys was presented: public keys are only good for /v1/track. */
  kind: ProjectKeyKind;
}

// Fixed texts, one per kind: each is an equality lookup on the key column's unique index.
const BY_SECRET_KEY = `SELECT id, name, disabled FROM projects WHERE secret_key_hash = $1`;
const BY_PUBLIC_KEY = `SELECT id, name, disabled FROM projects WHERE public_key_hash = $1`;

/**
 * Reads `projects` by key hash, for the API key guard (through ProjectKeyCache) and
 * `ProjectsService.findByKey`. Read-only: `modules/projects/projects.repository.ts` writes the table.
 * Unscoped by nature: this is how a request finds its project (and so its scope).
 */
@Injectable()
export class ProjectKeysRepository {
  /** The project a presented key belongs to (disabled ones included: the caller decides), or null. */
  async findByKey(db: Db, rawKey: string): Promise<ProjectKeyMatch | null> {
    const kind = keyKindOf(rawKey);
    if (!kind) return null;
    const project = await queryOne<KeyProject>(db, kind === 'secret' ? BY_SECRET_KEY : BY_PUBLIC_KEY, [hashKey(rawKey)]);
    return project ? { project, kind } : null;
  }
}
