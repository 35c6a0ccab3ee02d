import { MUTATION_POLICIES, type MutationPolicy } from '../agents/agent-definition.js';

/** Position from most (0, `read-only`) to least restrictive. */
function rank(policy: MutationPolicy): number {
  return MUTATION_POLICIES.indexOf(policy);
}

/** Is `requested` less restrictive than `declared` (an escalation an override may not make)? */
export function isEscalation(declared: MutationPolicy, requested: MutationPolicy): boolean {
  return rank(requested) > rank(declared);
}

/**
 * The policy in effect: the more restrictive of the code-declared one and the override. Saving an
 * override already refuses escalations; this also holds when the code's declaration later tightens.
 */
export function mostRestrictive(declared: MutationPolicy, override: MutationPolicy | null): MutationPolicy {
  if (override === null) return declared;
  return rank(override) < rank(declared) ? override : declared;
}
