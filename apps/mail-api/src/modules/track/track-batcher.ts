import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ProjectKeyKind } from '../../core/auth/project-keys.js';
import { CallCoalescer } from '../../core/database/call-coalescer.js';
import { projectScope } from '../../core/scope/project-scope.js';
import type { ContactDataPatch } from '../contacts/contact-data.js';
import { WorkflowTriggerService } from '../workflows/workflow-trigger.service.js';
import { TrackRepository, type TrackBatchEvent, type TrackContactChange, type TrackedRow, type TrackGroup } from './track.repository.js';

/** Statements in flight at once; further calls wait and go out together in the next batch. */
const MAX_IN_FLIGHT = 4;
const MAX_BATCH = 200;
const FOREIGN_KEY_VIOLATION = '23503';

export interface TrackCommand {
  projectId: string;
  /** Which key called: a public key only adds data keys and sets the flag of a contact it creates. */
  keyKind: ProjectKeyKind;
  email: string;
  subscribed?: boolean;
  patch: ContactDataPatch;
  eventName: string;
}

interface Pending {
  command: TrackCommand;
  resolve: (row: TrackedRow) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes POST /v1/track calls, coalescing concurrent ones into one statement (and one commit): under
 * load, the calls that arrive while earlier statements run go out together, so the per-statement and
 * per-commit costs are shared; a lone call goes out at once, alone. Each call's contact change and
 * event still commit atomically. Calls for one email in a batch become one contact change, merged in
 * arrival order, exactly as if applied one after another. If a batch fails, its calls are retried one
 * by one, so one bad call cannot fail the others. A batch may hold calls of several projects: each
 * call keeps its project (the scope of its rows), and busy projects share the statement's costs.
 */
@Injectable()
export class TrackBatcher {
  private readonly logger = new Logger(TrackBatcher.name);
  private readonly coalescer = new CallCoalescer<Pending>((batch) => this.write(batch), {
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
  });

  constructor(
    private readonly dataSource: DataSource,
    private readonly tracks: TrackRepository,
    private readonly workflows: WorkflowTriggerService,
  ) {}

  track(command: TrackCommand): Promise<TrackedRow> {
    return new Promise((resolve, reject) => this.coalescer.push({ command, resolve, reject }));
  }

  private async write(batch: Pending[]): Promise<void> {
    if (batch.length > 1) {
      let rows: TrackedRow[] | null = null;
      try {
        const [groups, events] = groupBatch(batch.map((p) => p.command));
        rows = await this.tracks.trackBatch(this.dataSource, { groups, events });
      } catch (error) {
        // Nothing of the batch was committed: write its calls one by one.
        this.logger.warn({ err: error, size: batch.length }, 'track batch failed; writing its calls one by one');
      }
      if (rows) {
        // Committed: never retried, whatever happens next.
        const mismatch =
          rows.length !== batch.length ? new Error(`track batch wrote ${rows.length} events for ${batch.length} calls`) : null;
        batch.forEach((pending, i) => (mismatch ? pending.reject(mismatch) : pending.resolve(rows[i])));
        if (!mismatch) this.startWorkflows(batch, rows);
        return;
      }
    }
    const written = await Promise.all(
      batch.map((p) =>
        this.writeOne(p.command).then(
          (row) => (p.resolve(row), row),
          (error: unknown) => (p.reject(error), null),
        ),
      ),
    );
    this.startWorkflows(batch, written);
  }

  /**
   * The committed events start and resume workflow executions: one trigger job per batch (for the events
   * a workflow of their project cares about), added after the callers are answered and outside the
   * batch's slot, so it never delays the next batch. A project with no workflow for these event names
   * costs a cache lookup. It never fails: what it misses, the workflow sweep catches up.
   */
  private startWorkflows(batch: Pending[], rows: (TrackedRow | null)[]): void {
    const events = rows.flatMap((row, i) =>
      row ? [{ id: row.id, projectId: batch[i].command.projectId, name: batch[i].command.eventName }] : [],
    );
    void this.workflows.afterTrack(events);
  }

  private async writeOne(c: TrackCommand): Promise<TrackedRow> {
    const change = applyTrackCall(null, c);
    const run = () =>
      this.tracks.track(this.dataSource, projectScope(c.projectId), {
        email: c.email,
        change,
        eventName: c.eventName,
        eventData: c.patch.event,
      });
    try {
      return await run();
    } catch (error) {
      // The contact was deleted between the statement's read and its event insert: run it again,
      // which now creates the contact afresh.
      if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
      return run();
    }
  }
}

/** One group per (project, email), changes merged in order (applyTrackCall); one event per command, in order. */
export function groupBatch(commands: TrackCommand[]): [TrackGroup[], TrackBatchEvent[]] {
  const groups: TrackGroup[] = [];
  const index = new Map<string, number>();
  const events = commands.map((c) => {
    const key = `${c.projectId} ${c.email.toLowerCase()}`;
    let at = index.get(key);
    if (at === undefined) {
      at = groups.push({ projectId: c.projectId, email: c.email, ...applyTrackCall(null, c) }) - 1;
      index.set(key, at);
    } else {
      groups[at] = { ...groups[at], ...applyTrackCall(groups[at], c) };
    }
    return { group: at, name: c.eventName, data: c.patch.event };
  });
  return [groups, events];
}

/**
 * `change` (null: no call yet) followed by call `c`, as if applied one after the other (decisions.md
 * "Workflow and tracking safety"). The secret key sets (overwriting), deletes (`null`) and sets the flag.
 * The public key only adds keys the contact does not have: a key already set or added by `change` stays
 * as it is, a key deleted by `change` is missing by then and is set; its `null` deletes nothing (the event
 * still records it). Its flag counts only if its call creates the contact, so only as the first call of a
 * change: a later call finds the contact the first one created.
 */
export function applyTrackCall(change: TrackContactChange | null, c: TrackCommand): TrackContactChange {
  const next: TrackContactChange = change
    ? { subscribed: change.subscribed, subscribedIfNew: change.subscribedIfNew, set: { ...change.set }, add: { ...change.add }, unset: [] }
    : { subscribed: null, subscribedIfNew: c.subscribed ?? null, set: {}, add: {}, unset: [] };
  const unset = new Set(change?.unset ?? []);
  if (c.keyKind === 'secret') {
    if (c.subscribed !== undefined) next.subscribed = c.subscribed;
    for (const key of c.patch.unset) {
      delete next.set[key];
      delete next.add[key];
      unset.add(key);
    }
    for (const [key, value] of Object.entries(c.patch.set)) {
      next.set[key] = value;
      delete next.add[key];
      unset.delete(key);
    }
  } else {
    for (const [key, value] of Object.entries(c.patch.set)) {
      if (Object.hasOwn(next.set, key) || Object.hasOwn(next.add, key)) continue;
      if (unset.delete(key)) next.set[key] = value;
      else next.add[key] = value;
    }
  }
  next.unset = [...unset];
  return next;
}
