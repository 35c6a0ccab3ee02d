import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, type EntityManager } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import {
  generateKeyPair,
  hashKey,
  keyKindOf,
  PUBLIC_KEY_PATTERN,
  SECRET_KEY_PATTERN,
  storedKeyPair,
  type ProjectKeyKind,
  type ProjectKeyPair,
} from './project-keys.js';
import { Project } from './project.entity.js';

// Serialises concurrent bootstraps (several API replicas starting at once).
const BOOTSTRAP_LOCK_KEY = 727_201;

export const BOOTSTRAP_PROJECT_NAME = 'Default';

export interface ProjectKeyMatch {
  project: Project;
  /** Which of the project's keys was presented: public keys are only good for /v1/track. */
  kind: ProjectKeyKind;
}

export interface BootstrapProjectResult {
  created: boolean;
  projectId: string;
}

/**
 * Projects and their API keys. Raw keys exist only in the return value of `create` and `rotateKeys`;
 * the database keeps hashes. Depends on nothing but a DataSource, so the CLI can use it without Nest.
 */
@Injectable()
export class ProjectsService {
  constructor(private readonly dataSource: DataSource) {}

  async create(name: string): Promise<MailProjectCredentials> {
    const trimmed = name.trim();
    if (!trimmed) throw DomainError.badRequest('project name must not be empty');
    const keys = generateKeyPair();
    const project = await this.insert(this.dataSource.manager, trimmed, keys);
    return { id: project.id, name: project.name, ...keys };
  }

  /** A new key pair; the old keys stop working as soon as this returns. */
  async rotateKeys(id: string): Promise<MailProjectCredentials> {
    if (!isUUID(id)) throw projectNotFound();
    const keys = generateKeyPair();
    const result = await this.dataSource
      .createQueryBuilder()
      .update(Project)
      .set(storedKeyPair(keys))
      .where('id = :id', { id })
      .returning(['id', 'name'])
      .execute();
    const [row] = result.raw as { id: string; name: string }[];
    if (!row) throw projectNotFound();
    return { id: row.id, name: row.name, ...keys };
  }

  /** The project a presented key belongs to (disabled ones included: the caller decides), or null. */
  async findByKey(rawKey: string): Promise<ProjectKeyMatch | null> {
    const kind = keyKindOf(rawKey);
    if (!kind) return null;
    const hash = hashKey(rawKey);
    const project = await this.dataSource
      .getRepository(Project)
      .findOneBy(kind === 'secret' ? { secretKeyHash: hash } : { publicKeyHash: hash });
    return project ? { project, kind } : null;
  }

  /**
   * decisions.md "mail bootstrap": when no project has this secret key, create project `Default` with
   * exactly these keys. The advisory lock makes concurrent starts see each other's insert.
   */
  async ensureBootstrapProject(secretKey: string, publicKey: string): Promise<BootstrapProjectResult> {
    if (!SECRET_KEY_PATTERN.test(secretKey) || !PUBLIC_KEY_PATTERN.test(publicKey)) {
      throw new Error('bootstrap keys must be sk_/pk_ followed by 48 lowercase hex characters');
    }
    const stored = storedKeyPair({ secretKey, publicKey });
    return this.dataSource.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
      const projects = tx.getRepository(Project);
      const existing = await projects.findOneBy({ secretKeyHash: stored.secretKeyHash });
      if (existing) return { created: false, projectId: existing.id };
      // Without this check the insert fails on the unique index with a message naming no variable.
      if (await projects.existsBy({ publicKeyHash: stored.publicKeyHash })) {
        throw new Error('MAIL_BOOTSTRAP_PUBLIC_KEY already belongs to a project with another secret key');
      }
      const project = await this.insert(tx, BOOTSTRAP_PROJECT_NAME, { secretKey, publicKey });
      return { created: true, projectId: project.id };
    });
  }

  private insert(manager: EntityManager, name: string, keys: ProjectKeyPair): Promise<Project> {
    const projects = manager.getRepository(Project);
    return projects.save(projects.create({ name, ...storedKeyPair(keys) }));
  }
}

function projectNotFound(): DomainError {
  return DomainError.notFound('project not found');
}
