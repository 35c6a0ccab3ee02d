import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SPENT_TODAY_SQL } from '../src/modules/ai-assistant/usage/ai-usage.repository.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';
import { readChatStream, ScriptedOpenAI } from './support/scripted-openai.js';

/**
 * decisions.md "Provider endpoints and spend": AI_TENANT_DAILY_TOKENS per tenant and AI_USER_DAILY_TOKENS
 * per user and UTC day, counted from the usage rows; past either, chat and run-object answer 429
 * `budget_exceeded` with Retry-After (seconds to the next UTC day) before any provider call.
 */
const TENANT_BUDGET = 1000;
const USER_BUDGET = 100;
const FEATURES = ['ai_assistant.view', 'auth.roles.list'];

type User = Awaited<ReturnType<Factories['loggedInUser']>>;

/** Seconds from now to the next 00:00 UTC. */
const secondsToUtcMidnight = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

describe('AI daily token budgets', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let db: DataSource;
  let provider: ScriptedOpenAI;

  beforeAll(async () => {
    provider = await ScriptedOpenAI.start();
    t = await startPlatformApp({
      env: {
        AI_OPENAI_API_KEY: 'sk-budgets',
        AI_OPENAI_BASE_URL: provider.url,
        AI_TENANT_DAILY_TOKENS: String(TENANT_BUDGET),
        AI_USER_DAILY_TOKENS: String(USER_BUDGET),
      },
    });
    f = Factories.of(t);
    db = t.app.get(DataSource);
  });

  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  beforeEach(() => provider.reset());

  const chat = async (user: User) => {
    const res = await fetch(`${t.url}/ai_assistant/ai/chat?agent=auth.access_assistant`, {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text, body: res.status === 200 ? null : JSON.parse(text) };
  };
  const runObject = (user: User) =>
    request(t.url)
      .post('/ai_assistant/ai/run-object')
      .set(user.auth)
      .send({ agent: 'auth.access_summary', messages: [{ role: 'user', content: 'sum up' }] });

  /** A usage row as a finished model step writes it (at `createdAt`, default now). */
  const usageRow = (user: User, tokens: number, createdAt = 'now()') =>
    db.query(
      `INSERT INTO ai_usage_events (tenant_id, user_id, agent_id, provider_id, model_id, session_id, step_index, input_tokens, output_tokens, created_at)
       VALUES ($1, $2, 'auth.access_assistant', 'openai', 'gpt-4o-mini', $3, 0, $4, 0, ${createdAt})`,
      [user.tenant.id, user.user.id, randomUUID(), tokens],
    );

  const expectBudgetRefusal = (res: { status: number; retryAfter: string | null; body: unknown }) => {
    const expected = secondsToUtcMidnight();
    expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: { error: expect.any(String), code: 'budget_exceeded' } });
    // Seconds to the next UTC day, by the database's clock (the same machine here).
    expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(Math.max(1, Math.floor(expected) - 5));
    expect(Number(res.retryAfter)).toBeLessThanOrEqual(Math.ceil(expected) + 5);
  };

  it('a user past AI_USER_DAILY_TOKENS gets 429 on chat and run-object, and the provider is not asked', async () => {
    const user = await f.loggedInUser(t, { features: FEATURES });
    // Two real turns: 60 + 50 tokens, recorded from the provider's usage.
    provider.script(
      { text: 'one', usage: { promptTokens: 40, completionTokens: 20 } },
      { text: 'two', usage: { promptTokens: 30, completionTokens: 20 } },
    );
    expect((await chat(user)).status).toBe(200);
    expect((await chat(user)).status).toBe(200);
    expect(provider.requests).toHaveLength(2);
    const [{ used }] = await db.query(`SELECT sum(input_tokens + output_tokens)::int AS used FROM ai_usage_events WHERE user_id = $1`, [
      user.user.id,
    ]);
    expect(used).toBe(110);

    provider.otherwise(() => ({ text: 'should not be asked', usage: { promptTokens: 1, completionTokens: 1 } }));
    expectBudgetRefusal(await chat(user));
    const object = await runObject(user);
    expectBudgetRefusal({ status: object.status, retryAfter: object.headers['retry-after'] ?? null, body: object.body });
    // The 429s came back; no request reached the provider in between.
    expect(provider.requests).toHaveLength(2);

    // Another user of the same tenant still has budget.
    const colleague = await f.loggedInUser(t, { features: FEATURES }, user.tenant);
    expect((await chat(colleague)).status).toBe(200);
    expect(provider.requests).toHaveLength(3);
  });

  it('a tenant past AI_TENANT_DAILY_TOKENS refuses every user of it; other tenants and yesterday’s rows do not count', async () => {
    const first = await f.loggedInUser(t, { features: FEATURES });
    const second = await f.loggedInUser(t, { features: FEATURES }, first.tenant);
    const third = await f.loggedInUser(t, { features: FEATURES }, first.tenant);
    // Ten users' worth of rows below each one's own budget: 11 x 95 = 1045 >= 1000 for the tenant.
    for (let i = 0; i < 11; i += 1) await usageRow(await f.loggedInUser(t, { features: FEATURES }, first.tenant), 95);
    // Yesterday (UTC) a lot, for the other two users: not today's spend.
    await usageRow(second, 50_000, `date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 second'`);
    await usageRow(third, 50_000, `now() - interval '2 days'`);

    provider.otherwise(() => ({ text: 'should not be asked' }));
    expectBudgetRefusal(await chat(second));
    expectBudgetRefusal(await chat(third));
    const object = await runObject(first);
    expectBudgetRefusal({ status: object.status, retryAfter: object.headers['retry-after'] ?? null, body: object.body });
    expect(provider.requests).toHaveLength(0);

    // Another tenant, with a big day yesterday only, chats.
    const other = await f.loggedInUser(t, { features: FEATURES });
    await usageRow(other, 1_000_000, `now() - interval '1 day' - interval '1 hour'`);
    const { status, text } = await chat(other);
    expect(status).toBe(200);
    expect((await readChatStream(text)).done).toBe(true);
    expect(provider.requests).toHaveLength(1);
  });

  it('an invalid request is still its 400 or 404, not the 429', async () => {
    const user = await f.loggedInUser(t, { features: FEATURES });
    await usageRow(user, USER_BUDGET);
    const unknown = await fetch(`${t.url}/ai_assistant/ai/chat?agent=auth.nobody`, {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(unknown.status).toBe(404);
    const badProvider = await fetch(`${t.url}/ai_assistant/ai/chat?agent=auth.access_assistant&provider=nope`, {
      method: 'POST',
      headers: { ...user.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect({ status: badProvider.status, body: await badProvider.json() }).toEqual({
      status: 400,
      body: { error: expect.any(String), code: 'provider_unknown' },
    });
    expectBudgetRefusal(await chat(user));
    expect(provider.requests).toHaveLength(0);
  });

  it('today’s spend is one index-only scan of the tenant’s rows since UTC midnight', async () => {
    const user = await f.loggedInUser(t, { features: FEATURES });
    await usageRow(user, 1);
    await db.query('VACUUM ANALYZE ai_usage_events');
    // This table is small here; what matters is that the index covers the query (no heap read per row).
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN (COSTS OFF) ${SPENT_TODAY_SQL}`, [user.tenant.id, user.user.id]);
    });
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Only Scan using ai_usage_events_tenant_created_tokens_idx/);
  });
});
