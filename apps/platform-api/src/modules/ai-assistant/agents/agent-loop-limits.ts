import { z } from 'zod';
import type { AgentDefinition } from './agent-definition.js';

/** The agent loop's limits when nothing overrides them. */
export const LOOP_DEFAULTS = { maxSteps: 8, maxToolCalls: 16, maxWallClockMs: 60_000, maxTokens: 200_000 } as const;

/** What an override may set (inclusive bounds). */
export const LOOP_BOUNDS = {
  loopMaxSteps: { min: 1, max: 50 },
  loopMaxToolCalls: { min: 0, max: 200 },
  loopMaxWallClockMs: { min: 1_000, max: 600_000 },
  loopMaxTokens: { min: 100, max: 5_000_000 },
} as const;

export const STOP_CONDITIONS_MAX = 10;

/** One stop condition of `loopStopWhenJson`: stop after N steps, or once a named tool has been called. */
export type StopCondition = { type: 'stepCount'; steps: number } | { type: 'hasToolCall'; toolName: string };

/** The stop-condition schema for one agent (a `hasToolCall` must name one of its tools). */
export function stopConditionSchema(agent: AgentDefinition): z.ZodType<StopCondition> {
  const toolNames = agent.tools.map((t) => t.name);
  return z.discriminatedUnion('type', [
    z.object({ type: z.literal('stepCount'), steps: z.number().int().min(1).max(LOOP_BOUNDS.loopMaxSteps.max) }).strict(),
    z
      .object({
        type: z.literal('hasToolCall'),
        toolName: z
          .string()
          .refine((name) => toolNames.includes(name), { message: `must be one of the agent's tools: ${toolNames.join(', ') || 'none'}` }),
      })
      .strict(),
  ]);
}

/** The seven loop columns of an agent's override (null: that axis falls back to the default). */
export interface LoopOverrideValues {
  loopDisabled: boolean | null;
  loopMaxSteps: number | null;
  loopMaxToolCalls: number | null;
  loopMaxWallClockMs: number | null;
  loopMaxTokens: number | null;
  loopStopWhenJson: StopCondition[] | null;
  loopActiveToolsJson: string[] | null;
}

export const LOOP_FIELDS = [
  'loopDisabled',
  'loopMaxSteps',
  'loopMaxToolCalls',
  'loopMaxWallClockMs',
  'loopMaxTokens',
  'loopStopWhenJson',
  'loopActiveToolsJson',
] as const satisfies readonly (keyof LoopOverrideValues)[];

export const EMPTY_LOOP_OVERRIDE: LoopOverrideValues = {
  loopDisabled: null,
  loopMaxSteps: null,
  loopMaxToolCalls: null,
  loopMaxWallClockMs: null,
  loopMaxTokens: null,
  loopStopWhenJson: null,
  loopActiveToolsJson: null,
};

/** The limits a run applies. */
export interface LoopLimits {
  maxSteps: number;
  maxToolCalls: number;
  maxWallClockMs: number;
  maxTokens: number;
  stopWhen: StopCondition[];
  /** null: every tool the caller may use. */
  activeTools: string[] | null;
}

/**
 * The limits of one run: the defaults, the tenant's override, then the request's `loopBudget` (a step
 * budget that can only lower the cap). A disabled loop is one model step.
 */
export function loopLimits(override: LoopOverrideValues | null, loopBudget?: number): LoopLimits {
  const o = override ?? EMPTY_LOOP_OVERRIDE;
  let maxSteps = o.loopDisabled ? 1 : (o.loopMaxSteps ?? LOOP_DEFAULTS.maxSteps);
  if (loopBudget !== undefined) maxSteps = Math.min(maxSteps, loopBudget);
  return {
    maxSteps,
    maxToolCalls: o.loopMaxToolCalls ?? LOOP_DEFAULTS.maxToolCalls,
    maxWallClockMs: o.loopMaxWallClockMs ?? LOOP_DEFAULTS.maxWallClockMs,
    maxTokens: o.loopMaxTokens ?? LOOP_DEFAULTS.maxTokens,
    stopWhen: o.loopStopWhenJson ?? [],
    activeTools: o.loopActiveToolsJson,
  };
}
