import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AuthContext } from '../src/core/auth/auth-context.js';
import { AgentRegistry } from '../src/modules/ai-assistant/agents/agent-registry.js';
import type { MutationTool } from '../src/modules/ai-assistant/agents/agent-definition.js';
import { PendingActionsService } from '../src/modules/ai-assistant/actions/pending-actions.service.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const ACTIONS = '/ai_assistant/ai/actions';
const FULL = ['ai_assistant.view', 'ai_assistant.settings.manage', 'auth.roles.list', 'auth.roles.manage'];
const AGENT = 'auth.access_assistant';

/**
 * The confirm checks of platform-api.md, in its order: status, expiry, agent registration, required
 * features, mutation policy, tool whitelist, attachment tenant scope, record version, input-schema drift.
 * Each failing check leaves the action pending (or expired) and the role untouched.
 */
describe('AI pending action confirm: the checks, in order', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let actions: PendingActionsService;
  let renameTool: MutationTool;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    actions = t.app.get(PendingActionsService, { strict: false });
    const registry = t.app.get(AgentRegistry, { strict: false });
    renameTool = registry.get(AGENT)!.tools.find((tool) => tool.name === 'auth.rename_role') as MutationTool;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A logged-in user with `features` and a role of its tenant to rename. */
  async function setup(features = FULL, tenant?: { id: string; organizationId: string }) {
    const owner = await f.loggedInUser(t, { features }, tenant);
    const target = await f.role(owner.tenant.id, {}, { name: `Target ${randomUUID().slice(0, 6)}` });
    const auth = new AuthContext(owner.user.id, owner.tenant.id, owner.tenant.organizationId, randomUUID(), {
      isSuperAdmin: false,
      features,
      organizations: null,
      roleIds: [owner.role.id],
      roleNames: [owner.role.name],
      hasCustomAcl: false,
    });
    return { ...owner, target, context: auth };
  }
  /** A pending action stored as chat stores one (preview, then createFromTool), whatever the user's features. */
  async function proposal(s: Awaited<ReturnType<typeof setup>>, extra: { attachmentIds?: string[]; name?: string } = {}) {
    const input = { roleId: s.target.id, name: extra.name ?? `Renamed ${randomUUID().slice(0, 6)}` };
    const full = new AuthContext(s.user.id, s.tenant.id, s.tenant.organizationId, randomUUID(), { ...s.context.acl, features: FULL });
    const preview = await renameTool.preview({ auth: full }, input);
    const action = await actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.rename_role', input, preview, ...extra });
    return action.id;
  }
  const confirm = (auth: Record<string, string>, id: string) => request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth);
  const statusOf = async (id: string) => (await ds.query('SELECT status FROM ai_pending_actions WHERE id = $1', [id]))[0].status;
  const roleName = async (id: string) => (await ds.query('SELECT name FROM roles WHERE id = $1', [id]))[0]?.name;
  const setRow = (id: string, sql: string, params: unknown[] = []) =>
    ds.query(`UPDATE ai_pending_actions SET ${sql} WHERE id = $1`, [id, ...params]);

  it('agent registration: an action of an agent that is no longer registered is 404', async () => {
    const s = await setup();
    const id = await proposal(s);
    await setRow(id, `agent_id = 'ghost.agent'`);
    expect((await confirm(s.auth, id).expect(404)).body).toEqual({ error: 'agent not found' });
    expect(await statusOf(id)).toBe('pending');
  });

  it('required features: the agent’s (auth.roles.list) and the tool’s (auth.roles.manage) are needed at confirm', async () => {
    for (const features of [
      ['ai_assistant.view', 'auth.roles.manage'],
      ['ai_assistant.view', 'auth.roles.list'],
    ]) {
      const s = await setup(features);
      const id = await proposal(s);
      const res = await confirm(s.auth, id).expect(403);
      expect(res.body.error).toMatch(/missing features/);
      expect(await statusOf(id)).toBe('pending');
      expect(await roleName(s.target.id)).toBe(s.target.name);
    }
  });

  it('mutation policy: read-only in the tenant is 403; without the override the action runs', async () => {
    const s = await setup();
    const id = await proposal(s);
    await request(t.url)
      .post(`/ai_assistant/ai/agents/${AGENT}/mutation-policy`)
      .set(s.auth)
      .send({ mutationPolicy: 'read-only' })
      .expect(200);
    expect((await confirm(s.auth, id).expect(403)).body.error).toMatch(/read-only/);
    // Another tenant's override does not reach this tenant.
    const other = await setup();
    const otherId = await proposal(other);
    await confirm(other.auth, otherId).expect(200);
    await request(t.url).delete(`/ai_assistant/ai/agents/${AGENT}/mutation-policy`).set(s.auth).expect(200);
    await confirm(s.auth, id).expect(200);
  });

  it('tool whitelist: a tool the agent does not declare, or a read tool, is 403', async () => {
    const s = await setup();
    for (const toolName of ['auth.drop_everything', 'auth.list_roles']) {
      const id = await proposal(s);
      await setRow(id, 'tool_name = $2', [toolName]);
      expect((await confirm(s.auth, id).expect(403)).body.error).toMatch(/not allowed/);
      expect(await statusOf(id)).toBe('pending');
    }
  });

  it('attachment tenant scope: an attachment of another tenant (or none) is 403; the tenant’s own passes', async () => {
    const s = await setup();
    const other = await f.tenant();
    const insertAttachment = async (tenantId: string) => {
      const id = randomUUID();
      await ds.query(
        `INSERT INTO attachments (id, tenant_id, partition_code, entity_id, record_id, file_name, mime_type, file_size, storage_key, checksum)
         VALUES ($1, $2, 'privateAttachments', 'auth.role', $3, 'a.txt', 'text/plain', 1, $4, 'x')`,
        [id, tenantId, s.target.id, `test/${id}`],
      );
      return id;
    };
    const own = await insertAttachment(s.tenant.id);
    const foreign = await insertAttachment(other.id);
    for (const attachmentIds of [[own, foreign], [randomUUID()]]) {
      const id = await proposal(s, { attachmentIds });
      expect((await confirm(s.auth, id).expect(403)).body.error).toMatch(/attachment/);
      expect(await statusOf(id)).toBe('pending');
    }
    const id = await proposal(s, { attachmentIds: [own] });
    const res = await confirm(s.auth, id).expect(200);
    expect(res.body.pendingAction.attachmentIds).toEqual([own]);
  });

  it('record version: a role renamed (or deleted) since the preview is 412 stale_version; the action stays pending', async () => {
    const s = await setup();
    const id = await proposal(s);
    await request(t.url).put('/auth/roles').set(s.auth).send({ id: s.target.id, name: 'Renamed meanwhile' }).expect(200);
    const res = await confirm(s.auth, id).expect(412);
    expect(res.body).toEqual({ error: expect.any(String), code: 'stale_version' });
    expect(await statusOf(id)).toBe('pending');
    expect(await roleName(s.target.id)).toBe('Renamed meanwhile');

    const gone = await setup();
    const goneId = await proposal(gone);
    await ds.query('DELETE FROM roles WHERE id = $1', [gone.target.id]);
    expect((await confirm(gone.auth, goneId).expect(412)).body.code).toBe('stale_version');
  });

  it('input-schema drift: a stored input the tool’s schema no longer accepts is 412 schema_drift', async () => {
    const s = await setup();
    const id = await proposal(s);
    await setRow(id, `normalized_input = jsonb_build_object('roleId', $2::text, 'name', '', 'force', true)`, [s.target.id]);
    const res = await confirm(s.auth, id).expect(412);
    expect(res.body).toEqual({ error: expect.any(String), code: 'schema_drift' });
    expect(await statusOf(id)).toBe('pending');
    expect(await roleName(s.target.id)).toBe(s.target.name);
  });

  it('the order: expiry before the agent, the agent before features, policy before the version, version before drift', async () => {
    const s = await setup();
    // Expired and of an unknown agent: expired.
    const a = await proposal(s);
    await setRow(a, `agent_id = 'ghost.agent', expires_at = now() - interval '1 second'`);
    expect((await confirm(s.auth, a).expect(409)).body.code).toBe('expired');
    // Unknown agent and a user without features: 404.
    const weak = await setup(['ai_assistant.view'], s.tenant);
    const b = await proposal(weak);
    await setRow(b, `agent_id = 'ghost.agent'`);
    await confirm(weak.auth, b).expect(404);
    // Read-only and stale: 403.
    const c = await proposal(s);
    await request(t.url)
      .put('/auth/roles')
      .set(s.auth)
      .send({ id: s.target.id, name: `Moved ${randomUUID().slice(0, 6)}` })
      .expect(200);
    await request(t.url)
      .post(`/ai_assistant/ai/agents/${AGENT}/mutation-policy`)
      .set(s.auth)
      .send({ mutationPolicy: 'read-only' })
      .expect(200);
    await confirm(s.auth, c).expect(403);
    await request(t.url).delete(`/ai_assistant/ai/agents/${AGENT}/mutation-policy`).set(s.auth).expect(200);
    // Stale and with a drifted input of the same target: stale_version (the version is read with the stored input).
    await setRow(c, `normalized_input = normalized_input || '{"force": true}'::jsonb`);
    expect((await confirm(s.auth, c).expect(412)).body.code).toBe('stale_version');
    // Drifted so far that the preview cannot read the target: schema_drift.
    await setRow(c, `normalized_input = '{"roleId": 42}'::jsonb`);
    expect((await confirm(s.auth, c).expect(412)).body.code).toBe('schema_drift');
  });

  it('createFromTool refuses what chat must not store: unknown agents, non-mutation tools, invalid input or attachment ids', async () => {
    const s = await setup();
    const preview = { targetEntityType: 'auth.role', targetRecordId: s.target.id, fieldDiff: {}, recordVersion: null };
    const input = { roleId: s.target.id, name: 'x' };
    await expect(
      actions.createFromTool(s.context, { agentId: 'ghost.agent', toolName: 'auth.rename_role', input, preview }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.list_roles', input, preview })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.rename_role', input: { roleId: 'nope', name: 'x' }, preview }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.rename_role', input, preview, attachmentIds: ['../etc'] }),
    ).rejects.toMatchObject({ status: 400 });
    // The model-facing name works too, and the same proposal while pending is the same action.
    const first = await actions.createFromTool(s.context, {
      agentId: AGENT,
      toolName: 'auth__rename_role',
      input,
      preview,
      sessionId: null,
    });
    const again = await actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.rename_role', input, preview });
    expect(again.id).toBe(first.id);
    // Once it expired, the same proposal is a new action (and the old one is marked expired).
    await setRow(first.id, `expires_at = now() - interval '1 second'`);
    const fresh = await actions.createFromTool(s.context, { agentId: AGENT, toolName: 'auth.rename_role', input, preview });
    expect(fresh.id).not.toBe(first.id);
    expect(await statusOf(first.id)).toBe('expired');
  });
});
