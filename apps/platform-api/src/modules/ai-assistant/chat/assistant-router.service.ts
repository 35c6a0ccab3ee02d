import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import type { AgentDefinition, ExecutionMode } from '../agents/agent-definition.js';
import { AgentRegistry } from '../agents/agent-registry.js';

export interface RouteCandidate {
  agentId: string;
  executionMode: ExecutionMode;
  score: number;
}

export interface RouteResult {
  /** The handler chosen for the query: the best-scoring agent the caller may use (null: none). */
  agentId: string | null;
  executionMode: ExecutionMode | null;
  candidates: RouteCandidate[];
}

/** Words of at least 3 letters or digits, lower-cased (a linear scan, no regex over user input). */
function words(text: string): Set<string> {
  const found = new Set<string>();
  let current = '';
  for (const char of text.toLowerCase()) {
    if (/[\p{L}\p{N}]/u.test(char)) {
      current += char;
      continue;
    }
    if (current.length >= 3) found.add(current);
    current = '';
  }
  if (current.length >= 3) found.add(current);
  return found;
}

/** An agent's vocabulary: its id, label, description and its tools' names and descriptions. */
function vocabulary(agent: AgentDefinition): Set<string> {
  return words([agent.id, agent.label, agent.description, ...agent.tools.flatMap((t) => [t.name, t.description])].join(' '));
}

/**
 * POST /ai_assistant/route: picks the agent (the handler) for a user query without a model call: the
 * agents the caller may use, scored by the share of the query's words found in their vocabulary
 * (a shared prefix of 4+ letters counts, so "roles" matches "role"); ties go to chat agents, then to
 * registration order. Deterministic and free; the chosen agent then answers through chat.
 */
@Injectable()
export class AssistantRouterService {
  private readonly vocabularies = new Map<string, Set<string>>();

  constructor(private readonly registry: AgentRegistry) {}

  route(auth: AuthContext, query: string, options: { mode?: ExecutionMode } = {}): RouteResult {
    const queryWords = [...words(query)];
    const candidates = this.registry
      .list()
      .filter((agent) => auth.can(...agent.requiredFeatures) && (!options.mode || agent.executionMode === options.mode))
      .map((agent, order) => ({ agent, order, score: this.score(agent, queryWords) }))
      .sort((a, b) => b.score - a.score || modeRank(a.agent) - modeRank(b.agent) || a.order - b.order)
      .map(({ agent, score }) => ({ agentId: agent.id, executionMode: agent.executionMode, score }));
    const best = candidates[0];
    return { agentId: best?.agentId ?? null, executionMode: best?.executionMode ?? null, candidates };
  }

  private score(agent: AgentDefinition, queryWords: string[]): number {
    if (queryWords.length === 0) return 0;
    let vocab = this.vocabularies.get(agent.id);
    if (!vocab) {
      vocab = vocabulary(agent);
      this.vocabularies.set(agent.id, vocab);
    }
    const known = [...vocab];
    const hits = queryWords.filter((w) => vocab.has(w) || known.some((v) => sharedPrefix(v, w) >= 4)).length;
    return Math.round((hits / queryWords.length) * 1000) / 1000;
  }
}

const modeRank = (agent: AgentDefinition) => (agent.executionMode === 'chat' ? 0 : 1);

function sharedPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a[i] === b[i]) i += 1;
  return i;
}
