import { MACHINE_USER_AGENTS } from './machine-user-agents.js';

/**
 * Why an open or click is a machine's (decisions.md "Engagement analytics"), the first rule that
 * applies: a HEAD request; a user agent on the bundled list; less than MAIL_MACHINE_WINDOW_S seconds
 * after the email was handed to SMTP; the third and later distinct links of one email clicked within
 * one second. None: a person's.
 */
export type MachineReason = 'HEAD' | 'USER_AGENT' | 'WINDOW' | 'BURST';

export const MACHINE_REASONS: readonly MachineReason[] = ['HEAD', 'USER_AGENT', 'WINDOW', 'BURST'];

/** Only this much of a user agent is matched: the cost of a crafted, huge header stays bounded. */
export const MAX_MATCHED_USER_AGENT = 512;

/** Clicks on this many distinct links of one email within BURST_MS make the next new link a machine's. */
const BURST_DISTINCT_LINKS = 2;
const BURST_MS = 1000;

/**
 * A list of user-agent entries (machine-user-agents.ts): each matched case-insensitively anywhere in the
 * user agent, or at its start when written `^entry`. Plain substring tests over at most
 * MAX_MATCHED_USER_AGENT characters: linear in the entries, whatever the header holds.
 */
export class UserAgentList {
  private readonly anywhere: string[];
  private readonly prefixes: string[];

  constructor(entries: readonly string[]) {
    const lower = entries.map((entry) => entry.toLowerCase()).filter((entry) => entry.replace(/^\^/, '').length > 0);
    this.anywhere = lower.filter((entry) => !entry.startsWith('^'));
    this.prefixes = lower.filter((entry) => entry.startsWith('^')).map((entry) => entry.slice(1));
  }

  matches(userAgent: string | null | undefined): boolean {
    if (!userAgent) return false;
    const ua = userAgent.slice(0, MAX_MATCHED_USER_AGENT).toLowerCase();
    return this.prefixes.some((prefix) => ua.startsWith(prefix)) || this.anywhere.some((entry) => ua.includes(entry));
  }
}

const BUNDLED = new UserAgentList(MACHINE_USER_AGENTS);

/** What the request alone tells: HEAD, or a listed user agent; null when it looks like a person. */
export function requestMachineReason(request: { head: boolean; userAgent: string | null }): MachineReason | null {
  if (request.head) return 'HEAD';
  return BUNDLED.matches(request.userAgent) ? 'USER_AGENT' : null;
}

/** One open or click to classify, at `at` (epoch ms, on the database's clock). */
export interface HitToClassify {
  emailId: string;
  kind: 'OPEN' | 'CLICK';
  url: string | null;
  at: number;
  requestReason: MachineReason | null;
}

/** A click recorded before (any email's own earlier clicks within the burst window). */
export interface PriorClick {
  emailId: string;
  url: string;
  at: number;
}

/**
 * The reason of each hit (same order), or null for a person's. `hits` must be in time order;
 * `sentAt` is when each email was handed to SMTP (null: not recorded yet, so no later than now).
 * Every click counts toward bursts, a machine's too: a scanner's sweep of the links is one burst.
 */
export function classifyHits(
  hits: readonly HitToClassify[],
  context: { sentAt: ReadonlyMap<string, number | null>; priorClicks: readonly PriorClick[]; windowMs: number },
): (MachineReason | null)[] {
  const clicks = new Map<string, { url: string; at: number }[]>();
  const clicksOf = (emailId: string) => clicks.get(emailId) ?? clicks.set(emailId, []).get(emailId)!;
  for (const click of context.priorClicks) clicksOf(click.emailId).push(click);
  return hits.map((hit) => {
    const sentAt = context.sentAt.get(hit.emailId) ?? null;
    const inWindow = context.windowMs > 0 && (sentAt === null || hit.at - sentAt < context.windowMs);
    let reason: MachineReason | null = hit.requestReason ?? (inWindow ? 'WINDOW' : null);
    if (hit.kind !== 'CLICK' || hit.url === null) return reason;
    const earlier = clicksOf(hit.emailId);
    if (!reason && isBurst(earlier, hit.url, hit.at)) reason = 'BURST';
    earlier.push({ url: hit.url, at: hit.at });
    return reason;
  });
}

/** Whether `url` clicked at `at` is a third or later distinct link of the email within one second. */
function isBurst(earlier: readonly { url: string; at: number }[], url: string, at: number): boolean {
  const recent = new Set(earlier.filter((click) => click.at > at - BURST_MS && click.at <= at).map((click) => click.url));
  return !recent.has(url) && recent.size >= BURST_DISTINCT_LINKS;
}
