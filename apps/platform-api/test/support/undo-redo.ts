import request from 'supertest';
import { DataSource } from 'typeorm';
import type { PlatformTestApp } from './platform-test-app.js';

export type AuthHeaders = Record<string, string>;

export const UNDO_PATH = '/audit_logs/audit-logs/actions/undo';
export const REDO_PATH = '/audit_logs/audit-logs/actions/redo';

/** The audit undo/redo endpoints and the caller's newest action log row, for tests of undoable writes. */
export function undoRedoClient(t: PlatformTestApp) {
  const ds = t.app.get(DataSource);
  return {
    undo: (auth: AuthHeaders, undoToken: unknown) => request(t.url).post(UNDO_PATH).set(auth).send({ undoToken }),
    redo: (auth: AuthHeaders, logId: unknown) => request(t.url).post(REDO_PATH).set(auth).send({ logId }),
    lastEntry: async (actorId: string) =>
      (await ds.query('SELECT * FROM action_logs WHERE actor_user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [actorId]))[0],
  };
}
