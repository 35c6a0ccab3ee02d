import { forSuite } from '@app/service-kit/testing/jest';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './factories.js';
import { startPlatformApp, type PlatformTestApp } from './platform-test-app.js';

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

/**
 * The app of a commands spec, for the calling describe block: started before its tests, closed after.
 * `manager()` logs in a manager (`managerFeatures`) of its own fresh tenant, so "the caller's latest
 * entry" is never another test's; `undo`, `redo` and `lastEntry` are undoRedoClient's. Read `t`, `f`
 * and `ds` inside tests (they throw before beforeAll started the app).
 */
export function commandSpecApp(managerFeatures: string[]) {
  const app = forSuite(
    'commandSpecApp',
    async () => {
      const t = await startPlatformApp();
      return { t, f: Factories.of(t), ds: t.app.get(DataSource) };
    },
    (started) => started.t.close(),
  );
  return {
    get t() {
      return app().t;
    },
    get f() {
      return app().f;
    },
    get ds() {
      return app().ds;
    },
    manager: () => app().f.loggedInUser(app().t, { features: managerFeatures }),
    undo: (auth: AuthHeaders, undoToken: string) => undoRedoClient(app().t).undo(auth, undoToken),
    redo: (auth: AuthHeaders, logId: string) => undoRedoClient(app().t).redo(auth, logId),
    lastEntry: (actorId: string) => undoRedoClient(app().t).lastEntry(actorId),
  };
}
