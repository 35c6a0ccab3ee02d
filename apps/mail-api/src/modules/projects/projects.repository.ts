import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, type Db } from '@app/service-kit';
import type { StoredKeyPair } from '../../core/auth/project-keys.js';

// Serialises concurrent bootstraps (several API replicas starting at once).
const BOOTSTRAP_LOCK_KEY = 727_201;

export interface ProjectRow {
  id: string;
  name: string;
}

/**
 * The one writer of `projects`. Unscoped: a project is the scope itself, and these statements serve
 * the CLI and the bootstrap (the key lookup of requests is core/auth/project-keys.repository.ts).
 */
@Injectable()
export class ProjectsRepository {
  async insert(db: Db, input: { name: string; keys: StoredKeyPair }): Promise<ProjectRow> {
    const [row] = await query<ProjectRow>(
      db,
      `INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix)
       VALUES ($1, $2, $3, $4)
       RETURNING id, name`,
      [input.name, input.keys.secretKeyHash, input.keys.publicKeyHash, input.keys.secretKeyPrefix],
    );
    return row;
  }

  /** A project's own sending cap in emails per second (null: none); null when there is no such project. */
  updateMaxSendRate(
    db: Db,
    input: { id: string; maxSendRate: number | null },
  ): Promise<(ProjectRow & { maxSendRate: number | null }) | null> {
    return queryOne<ProjectRow & { maxSendRate: number | null }>(
      db,
      `UPDATE projects SET max_send_rate = $2, updated_at = now() WHERE id = $1
        RETURNING id, name, max_send_rate AS "maxSendRate"`,
      [input.id, input.maxSendRate],
    );
  }

  /** Replaces the key hashes; null when there is no such project. */
  updateKeys(db: Db, input: { id: string; keys: StoredKeyPair }): Promise<ProjectRow | null> {
    return queryOne<ProjectRow>(
      db,
      `UPDATE projects SET secret_key_hash = $2, public_key_hash = $3, secret_key_prefix = $4, updated_at = now()
        WHERE id = $1
        RETURNING id, name`,
      [input.id, input.keys.secretKeyHash, input.keys.publicKeyHash, input.keys.secretKeyPrefix],
    );
  }

  async findIdBySecretKeyHash(db: Db, secretKeyHash: string): Promise<string | null> {
    const row = await queryOne<{ id: string }>(db, `SELECT id FROM projects WHERE secret_key_hash = $1`, [secretKeyHash]);
    return row?.id ?? null;
  }

  async existsWithPublicKeyHash(db: Db, publicKeyHash: string): Promise<boolean> {
    return (await queryOne(db, `SELECT 1 FROM projects WHERE public_key_hash = $1`, [publicKeyHash])) !== null;
  }

  /** Held until `tx` ends: concurrent bootstraps run one after another and see each other's insert. */
  async lockBootstrap(tx: Db): Promise<void> {
    await execute(tx, 'SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
  }
}
