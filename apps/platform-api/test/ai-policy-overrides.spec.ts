import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AuthContext } from '../src/core/auth/auth-context.js';
import { scopeOf, systemScope } from '../src/core/scope/tenant-scope.js';
import { MutationPolicyService } from '../src/modules/ai-assistant/overrides/mutation-policy.service.js';
import { PromptOverrideService } from '../src/modules/ai-assistant/overrides/prompt-override.service.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { undoRedoClient } from './support/undo-redo.js';

const ADMIN = ['ai_assistant.view', 'ai_assistant.settings.manage', 'audit_logs.*'];
const ASSISTANT = 'auth.access_assistant';
const SUMMARY = 'auth.access_summary';
const policyPath = (agentId: string) => `/ai_assistant/ai/agents/${agentId}/mutation-policy`;
const promptPath = (agentId: string) => `/ai_assistant/ai/agents/${agentId}/prompt-override`;

/**
 * Mutation-policy overrides (tighten only: 400 escalation_not_allowed) and versioned prompt overrides
 * (monotonic per tenant, organization and agent; newest 10; 400 reserved_key), their feature checks,
 * tenant isolation, action log entries, and the values chat reads through the services.
 */
describe('AI agent mutation policy and prompt override', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let policies: MutationPolicyService;
  let prompts: PromptOverrideService;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    policies = t.app.get(MutationPolicyService, { strict: false });
    prompts = t.app.get(PromptOverrideService, { strict: false });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('mutation policy', () => {
    it('GET answers the code-declared policy and no override; bad ids 400, unknown agents 404', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      expect((await request(t.url).get(policyPath(ASSISTANT)).set(admin.auth).expect(200)).body).toEqual({
        agentId: ASSISTANT,
        codeDeclared: 'confirm-required',
        override: null,
      });
      expect((await request(t.url).get(policyPath(SUMMARY)).set(admin.auth).expect(200)).body.codeDeclared).toBe('read-only');
      for (const bad of ['nodot', 'UPPER.case', 'a.b.c', '..%2f..']) {
        await request(t.url).get(policyPath(bad)).set(admin.auth).expect(400);
      }
      expect((await request(t.url).get(policyPath('ghost.agent')).set(admin.auth).expect(404)).body).toEqual({ error: 'agent not found' });
      await request(t.url).post(policyPath('ghost.agent')).set(admin.auth).send({ mutationPolicy: 'read-only' }).expect(404);
      await request(t.url).delete(policyPath('ghost.agent')).set(admin.auth).expect(404);
    });

    it('POST tightens (200, recorded, undoable); anything looser than the code is 400 escalation_not_allowed', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      const saved = await request(t.url)
        .post(policyPath(ASSISTANT))
        .set(admin.auth)
        .send({ mutationPolicy: 'read-only', notes: ' freeze ' })
        .expect(200);
      expect(saved.body).toEqual({
        ok: true,
        agentId: ASSISTANT,
        codeDeclared: 'confirm-required',
        override: {
          agentId: ASSISTANT,
          mutationPolicy: 'read-only',
          notes: 'freeze',
          updatedByUserId: admin.user.id,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      });
      expect(saved.headers['x-undo-token']).toEqual(expect.any(String));
      expect((await request(t.url).get(policyPath(ASSISTANT)).set(admin.auth).expect(200)).body.override.mutationPolicy).toBe('read-only');
      expect(await policies.effective(scopeOf(authOf(admin)), ASSISTANT)).toBe('read-only');

      const escalations: [string, string][] = [
        [ASSISTANT, 'destructive-confirm-required'],
        [SUMMARY, 'confirm-required'],
        [SUMMARY, 'destructive-confirm-required'],
      ];
      for (const [agentId, mutationPolicy] of escalations) {
        const res = await request(t.url).post(policyPath(agentId)).set(admin.auth).send({ mutationPolicy }).expect(400);
        expect(res.body).toEqual({ error: expect.any(String), code: 'escalation_not_allowed' });
      }
      // The same policy as the code's is allowed (it escalates nothing).
      await request(t.url).post(policyPath(ASSISTANT)).set(admin.auth).send({ mutationPolicy: 'confirm-required' }).expect(200);
      await request(t.url).post(policyPath(SUMMARY)).set(admin.auth).send({ mutationPolicy: 'read-only' }).expect(200);
      for (const body of [
        {},
        { mutationPolicy: 'yolo' },
        { mutationPolicy: 'read-only', notes: 'x'.repeat(2001) },
        { mutationPolicy: 5 },
      ]) {
        const res = await request(t.url).post(policyPath(ASSISTANT)).set(admin.auth).send(body).expect(400);
        expect(res.body.error).toMatch(/validation failed/);
      }
      // Saves are undoable: the undo of the last one restores the override before it.
      const { undo } = undoRedoClient(t);
      const again = await request(t.url).post(policyPath(ASSISTANT)).set(admin.auth).send({ mutationPolicy: 'read-only' }).expect(200);
      await undo(admin.auth, again.headers['x-undo-token']).expect(200);
      expect((await request(t.url).get(policyPath(ASSISTANT)).set(admin.auth).expect(200)).body.override.mutationPolicy).toBe(
        'confirm-required',
      );
    });

    it('DELETE is idempotent and falls back to the code-declared policy; the override is the tenant’s alone', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      const neighbour = await f.loggedInUser(t, { features: ADMIN });
      await request(t.url).post(policyPath(ASSISTANT)).set(admin.auth).send({ mutationPolicy: 'read-only' }).expect(200);
      expect((await request(t.url).get(policyPath(ASSISTANT)).set(neighbour.auth).expect(200)).body.override).toBeNull();
      expect(await policies.effective(systemScope(neighbour.tenant.id), ASSISTANT)).toBe('confirm-required');
      // The neighbour's DELETE leaves this tenant's override.
      expect((await request(t.url).delete(policyPath(ASSISTANT)).set(neighbour.auth).expect(200)).body.cleared).toBe(false);
      expect(await policies.effective(systemScope(admin.tenant.id), ASSISTANT)).toBe('read-only');
      const first = await request(t.url).delete(policyPath(ASSISTANT)).set(admin.auth).expect(200);
      expect(first.body).toEqual({ ok: true, agentId: ASSISTANT, codeDeclared: 'confirm-required', override: null, cleared: true });
      const second = await request(t.url).delete(policyPath(ASSISTANT)).set(admin.auth).expect(200);
      expect(second.body.cleared).toBe(false);
      expect(await policies.effective(systemScope(admin.tenant.id), ASSISTANT)).toBe('confirm-required');
      // An override the code would now refuse still never loosens the policy in effect.
      await ds.query(
        `INSERT INTO ai_mutation_policy_overrides (tenant_id, agent_id, mutation_policy) VALUES ($1, $2, 'destructive-confirm-required')`,
        [admin.tenant.id, SUMMARY],
      );
      expect(await policies.effective(systemScope(admin.tenant.id), SUMMARY)).toBe('read-only');
    });

    it('features: reading needs ai_assistant.view, changing ai_assistant.settings.manage', async () => {
      const viewer = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      await request(t.url).get(policyPath(ASSISTANT)).set(viewer.auth).expect(200);
      await request(t.url).post(policyPath(ASSISTANT)).set(viewer.auth).send({ mutationPolicy: 'read-only' }).expect(403);
      await request(t.url).delete(policyPath(ASSISTANT)).set(viewer.auth).expect(403);
      const manager = await f.loggedInUser(t, { features: ['ai_assistant.settings.manage'] });
      await request(t.url).get(policyPath(ASSISTANT)).set(manager.auth).expect(403);
      await request(t.url).get(policyPath(ASSISTANT)).expect(401);
    });
  });

  describe('prompt override', () => {
    it('versions are allocated 1, 2, 3… per (tenant, organization, agent); GET answers the newest 10, newest first', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      expect((await request(t.url).get(promptPath(ASSISTANT)).set(admin.auth).expect(200)).body).toEqual({
        agentId: ASSISTANT,
        override: null,
        versions: [],
      });
      for (let i = 1; i <= 12; i += 1) {
        const res = await request(t.url)
          .post(promptPath(ASSISTANT))
          .set(admin.auth)
          .send({ sections: { style: `Style ${i}` }, notes: `v${i}` })
          .expect(200);
        expect(res.body).toEqual({ ok: true, version: i, updatedAt: expect.any(String) });
      }
      const res = await request(t.url).get(promptPath(ASSISTANT)).set(admin.auth).expect(200);
      expect(res.body.versions.map((v: { version: number }) => v.version)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
      expect(res.body.override).toEqual(res.body.versions[0]);
      expect(res.body.override).toMatchObject({
        agentId: ASSISTANT,
        organizationId: admin.tenant.organizationId,
        version: 12,
        sections: { style: 'Style 12' },
        notes: 'v12',
        createdByUserId: admin.user.id,
      });
      // Another agent, another organization of the tenant, another tenant: their own sequences.
      expect(
        (
          await request(t.url)
            .post(promptPath(SUMMARY))
            .set(admin.auth)
            .send({ sections: { output: 'x' } })
            .expect(200)
        ).body.version,
      ).toBe(1);
      const [org] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Second', $2) RETURNING id`, [
        admin.tenant.id,
        `second-${admin.tenant.id.slice(0, 8)}`,
      ]);
      const colleague = await f.loggedInUser(t, { features: ADMIN }, { id: admin.tenant.id, organizationId: org.id });
      expect(
        (
          await request(t.url)
            .post(promptPath(ASSISTANT))
            .set(colleague.auth)
            .send({ sections: { style: 'Org 2' } })
            .expect(200)
        ).body.version,
      ).toBe(1);
      expect((await request(t.url).get(promptPath(ASSISTANT)).set(colleague.auth).expect(200)).body.versions).toHaveLength(1);
      const stranger = await f.loggedInUser(t, { features: ADMIN });
      expect((await request(t.url).get(promptPath(ASSISTANT)).set(stranger.auth).expect(200)).body.override).toBeNull();

      // What chat reads: the organization's newest version; a tenant-wide one (organization null) for the rest.
      const scope = systemScope(admin.tenant.id);
      expect(await prompts.currentSections(scope, ASSISTANT, admin.tenant.organizationId)).toEqual({ style: 'Style 12' });
      expect(await prompts.currentSections(scope, ASSISTANT, org.id)).toEqual({ style: 'Org 2' });
      expect(await prompts.currentSections(scope, ASSISTANT, null)).toBeNull();
      expect(await prompts.currentSections(systemScope(stranger.tenant.id), ASSISTANT, stranger.tenant.organizationId)).toBeNull();
      // Each save is an action log entry (not undoable: versions are history).
      const [entry] = await ds.query(
        `SELECT command_id, undo_token, snapshot_after FROM action_logs WHERE actor_user_id = $1 ORDER BY created_at DESC LIMIT 1`,
        [colleague.user.id],
      );
      expect(entry).toMatchObject({ command_id: 'ai_assistant.prompt_override.save', undo_token: null, snapshot_after: { version: 1 } });
    });

    it('concurrent saves get distinct, gapless versions', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      const saves = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          request(t.url)
            .post(promptPath(ASSISTANT))
            .set(admin.auth)
            .send({ sections: { style: `Concurrent ${i}` } }),
        ),
      );
      expect(saves.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(saves.map((r) => r.body.version as number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it('reserved policy keys are 400 reserved_key (also spelled otherwise); malformed bodies 400; nothing saved', async () => {
      const admin = await f.loggedInUser(t, { features: ADMIN });
      for (const key of ['mutationPolicy', 'readOnly', 'allowedTools', 'acceptedMediaTypes', 'read_only', 'MUTATION-POLICY']) {
        const res = await request(t.url)
          .post(promptPath(ASSISTANT))
          .set(admin.auth)
          .send({ sections: { style: 'ok', [key]: 'true' } })
          .expect(400);
        expect(res.body).toEqual({ error: expect.stringContaining(key), code: 'reserved_key' });
      }
      const malformed = [
        {},
        { sections: 'text' },
        { sections: ['a'] },
        { sections: { style: 5 } },
        { sections: { 'bad key!': 'x' } },
        { sections: { style: 'x'.repeat(20_001) } },
        { sections: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`s${i}`, 'x'])) },
        { sections: { style: 'x' }, notes: 5 },
      ];
      for (const body of malformed) {
        const res = await request(t.url).post(promptPath(ASSISTANT)).set(admin.auth).send(body).expect(400);
        expect(res.body.error).toMatch(/validation failed/);
      }
      await request(t.url).post(promptPath('Bad-Id')).set(admin.auth).send({ sections: {} }).expect(400);
      await request(t.url).post(promptPath('ghost.agent')).set(admin.auth).send({ sections: {} }).expect(404);
      expect((await request(t.url).get(promptPath(ASSISTANT)).set(admin.auth).expect(200)).body.versions).toEqual([]);
    });

    it('both routes need ai_assistant.settings.manage', async () => {
      const viewer = await f.loggedInUser(t, { features: ['ai_assistant.view'] });
      await request(t.url).get(promptPath(ASSISTANT)).set(viewer.auth).expect(403);
      await request(t.url)
        .post(promptPath(ASSISTANT))
        .set(viewer.auth)
        .send({ sections: { style: 'x' } })
        .expect(403);
      await request(t.url).get(promptPath(ASSISTANT)).expect(401);
    });
  });

  /** The AuthContext the guard builds for a logged-in test user (for the services chat calls). */
  function authOf(user: { user: { id: string }; tenant: { id: string; organizationId: string } }) {
    return new AuthContext(user.user.id, user.tenant.id, user.tenant.organizationId, 'test', {
      isSuperAdmin: false,
      features: ADMIN,
      organizations: null,
      roleIds: [],
      roleNames: [],
      hasCustomAcl: false,
    });
  }
});
