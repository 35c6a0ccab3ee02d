import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { generateKeyPair, PUBLIC_KEY_PATTERN, SECRET_KEY_PATTERN, storedKeyPair } from '../../core/auth/project-keys.js';
import { ProjectKeysRepository, type ProjectKeyMatch } from '../../core/auth/project-keys.repository.js';
import { ProjectsRepository } from './projects.repository.js';

export const BOOTSTRAP_PROJECT_NAME = 'Default';

export interface BootstrapProjectResult {
  created: boolean;
  projectId: string;
}

/**
 * Projects and their API keys. Raw keys exist only in the return value of `create` and `rotateKeys`;
 * the database keeps hashes. Depends on nothing but a DataSource (its repositories are stateless), so
 * the CLI can use it without Nest: `new ProjectsService(dataSource)`.
 */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly projects: ProjectsRepository = new ProjectsRepository(),
    private readonly projectKeys: ProjectKeysRepository = new ProjectKeysRepository(),
  ) {}

  async create(name: string): Promise<MailProjectCredentials> {
    const trimmed = name.trim();
    if (!trimmed) throw DomainError.badRequest('project name must not be empty');
    const keys = generateKeyPair();
    const project = await this.projects.insert(this.dataSource, { name: trimmed, keys: storedKeyPair(keys) });
    return { id: project.id, name: project.name, ...keys };
  }

  /** A new key pair; the old keys stop working as soon as this returns. */
  async rotateKeys(id: string): Promise<MailProjectCredentials> {
    if (!isUUID(id)) throw projectNotFound();
    const keys = generateKeyPair();
    const row = await this.projects.updateKeys(this.dataSource, { id, keys: storedKeyPair(keys) });
    if (!row) throw projectNotFound();
    return { id: row.id, name: row.name, ...keys };
  }

  /**
   * Caps the project's sending below its fair share (decisions.md "Fair sending and run-time rate"):
   * the marketing feeder feeds at most `maxSendRate` of its emails per second; null removes the cap.
   */
  async setMaxSendRate(id: string, maxSendRate: number | null): Promise<{ id: string; name: string; maxSendRate: number | null }> {
    if (!isUUID(id)) throw projectNotFound();
    const row = await this.projects.updateMaxSendRate(this.dataSource, { id, maxSendRate });
    if (!row) throw projectNotFound();
    return row;
  }

  /** The project a presented key belongs to (disabled ones included: the caller decides), or null. */
  findByKey(rawKey: string): Promise<ProjectKeyMatch | null> {
    return this.projectKeys.findByKey(this.dataSource, rawKey);
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
      await this.projects.lockBootstrap(tx);
      const existingId = await this.projects.findIdBySecretKeyHash(tx, stored.secretKeyHash);
      if (existingId) return { created: false, projectId: existingId };
      // Without this check the insert fails on the unique index with a message naming no variable.
      if (await this.projects.existsWithPublicKeyHash(tx, stored.publicKeyHash)) {
        throw new Error('MAIL_BOOTSTRAP_PUBLIC_KEY already belongs to a project with another secret key');
      }
      const project = await this.projects.insert(tx, { name: BOOTSTRAP_PROJECT_NAME, keys: stored });
      return { created: true, projectId: project.id };
    });
  }
}

function projectNotFound(): DomainError {
  return DomainError.notFound('project not found');
}
