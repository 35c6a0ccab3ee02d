import type { EngagementEmail, EngagementMarks } from '../delivery/email-engagement-marks.repository.js';
import type { LinkClicks } from './email-engagements.repository.js';
import { EMAIL_EVENT, type SystemEvent } from './engagement-events.service.js';
import type { MachineReason } from './machine-detection.js';

interface TimedHit {
  emailId: string;
  kind: 'OPEN' | 'CLICK';
  url: string | null;
  at: number;
}

interface EmailState {
  email: EngagementEmail;
  marks: EngagementMarks;
  changed: boolean;
  events: SystemEvent[];
}

/**
 * What a batch of hits (in time order, with their machine reasons) changes on their emails: the first
 * open and click of a person and of a machine (a click counts as an open of the same kind: mail
 * clients that block images still follow links), and the contact events of a person's first open and
 * first click (`email.opened`, `email.clicked` with the link's URL), by project. An email's earlier
 * marks (read under its lock) are kept, so each event is made once per email.
 */
export function firstMarks(
  hits: readonly TimedHit[],
  reasons: readonly (MachineReason | null)[],
  emails: ReadonlyMap<string, EngagementEmail>,
): { marks: EngagementMarks[]; events: Map<string, SystemEvent[]> } {
  const states = new Map<string, EmailState>();
  hits.forEach((hit, i) => {
    const email = emails.get(hit.emailId);
    if (!email) return;
    const state = states.get(email.id) ?? states.set(email.id, newState(email)).get(email.id)!;
    if (reasons[i] === null) markPerson(state, hit);
    else markMachine(state, hit);
  });
  const changed = [...states.values()].filter((s) => s.changed);
  const events = new Map<string, SystemEvent[]>();
  for (const s of changed) {
    if (s.events.length > 0) events.set(s.email.projectId, [...(events.get(s.email.projectId) ?? []), ...s.events]);
  }
  return { marks: changed.map((s) => s.marks), events };
}

function newState(email: EngagementEmail): EmailState {
  const marks = {
    emailId: email.id,
    projectId: email.projectId,
    openedAt: null,
    clickedAt: null,
    machineOpenedAt: null,
    machineClickedAt: null,
  };
  return { email: { ...email }, marks, changed: false, events: [] };
}

function markPerson(state: EmailState, hit: TimedHit): void {
  const { email, marks } = state;
  const at = new Date(hit.at);
  if (!email.opened) {
    email.opened = true;
    marks.openedAt = at;
    state.changed = true;
    state.events.push(...eventOf(email, EMAIL_EVENT.opened));
  }
  if (hit.kind === 'CLICK' && !email.clicked) {
    email.clicked = true;
    marks.clickedAt = at;
    state.changed = true;
    state.events.push(...eventOf(email, EMAIL_EVENT.clicked, hit.url ? { url: hit.url } : {}));
  }
}

function markMachine(state: EmailState, hit: TimedHit): void {
  const { email, marks } = state;
  const at = new Date(hit.at);
  if (!email.machineOpened) {
    email.machineOpened = true;
    marks.machineOpenedAt = at;
    state.changed = true;
  }
  if (hit.kind === 'CLICK' && !email.machineClicked) {
    email.machineClicked = true;
    marks.machineClickedAt = at;
    state.changed = true;
  }
}

function eventOf(email: EngagementEmail, name: string, extra: Record<string, string> = {}): SystemEvent[] {
  if (!email.contactId) return [];
  const data = { emailId: email.id, ...(email.campaignId ? { campaignId: email.campaignId } : {}), ...extra };
  return [{ contactId: email.contactId, name, data }];
}

/**
 * What a batch of clicks adds to its campaigns' link counters: every click, the machine ones, and a
 * recipient's first person's click on the link (`personClicked`: `emailId url` keys of such clicks
 * recorded before this batch).
 */
export function linkClicks(
  hits: readonly TimedHit[],
  reasons: readonly (MachineReason | null)[],
  emails: ReadonlyMap<string, EngagementEmail>,
  personClicked: ReadonlySet<string>,
): LinkClicks[] {
  const links = new Map<string, LinkClicks>();
  const seen = new Set(personClicked);
  hits.forEach((hit, i) => {
    const email = emails.get(hit.emailId);
    if (hit.kind !== 'CLICK' || hit.url === null || !email?.campaignId) return;
    const key = `${email.campaignId} ${hit.url}`;
    const link =
      links.get(key) ??
      links
        .set(key, { projectId: email.projectId, campaignId: email.campaignId, url: hit.url, clicks: 0, uniqueClicks: 0, machineClicks: 0 })
        .get(key)!;
    link.clicks += 1;
    if (reasons[i] !== null) link.machineClicks += 1;
    else if (!seen.has(`${email.id} ${hit.url}`)) {
      seen.add(`${email.id} ${hit.url}`);
      link.uniqueClicks += 1;
    }
  });
  return [...links.values()];
}
