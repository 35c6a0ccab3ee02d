import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { DataSource, type EntityManager } from 'typeorm';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { CallCoalescer } from '../../core/database/call-coalescer.js';
import { projectScope } from '../../core/scope/project-scope.js';
import { EmailEngagementMarksRepository, type EngagementEmail } from '../delivery/email-engagement-marks.repository.js';
import { EmailEngagementsRepository, type EngagementRow } from './email-engagements.repository.js';
import { firstMarks, linkClicks } from './engagement-marks.js';
import { EngagementEventsService } from './engagement-events.service.js';
import { classifyHits, type HitToClassify, type MachineReason } from './machine-detection.js';

/** Batches in flight at once; further hits wait and go out together in the next one. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 200;
const BURST_LOOKBACK_MS = 1000;

/** One pixel load or link followed, as the request saw it. */
export interface EngagementHit {
  projectId: string;
  emailId: string;
  kind: 'OPEN' | 'CLICK';
  url: string | null;
  /** HEAD or a listed user agent (machine-detection.ts); null when the request alone looks like a person. */
  requestReason: MachineReason | null;
  /** performance.now() when the request arrived: its time is measured from there, not from the write. */
  receivedAt: number;
}

interface Pending {
  hit: EngagementHit;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Records opens and clicks (the pixel and click endpoints), coalescing the hits that arrive while
 * earlier batches run into one transaction of a fixed number of statements: lock the emails, read
 * their clicks of the last second (burst rule) and which links their recipients clicked before,
 * insert every hit with its machine flag, add to the campaigns' link counters, set the emails' first
 * opens and clicks, and record the contact events of a person's first open and click (`email.opened`,
 * `email.clicked`), with the workflows they start. Machine hits make no contact event.
 * If a batch fails, its hits are recorded one by one, so one cannot fail the others.
 */
@Injectable()
export class EngagementRecorder {
  private readonly logger = new Logger(EngagementRecorder.name);
  /** The batch in flight (its completion) that holds each email: later batches of the email wait for it. */
  private readonly inFlightByEmail = new Map<string, Promise<void>>();
  private readonly coalescer = new CallCoalescer<Pending>((batch) => this.write(batch), {
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
  });

  constructor(
    private readonly dataSource: DataSource,
    private readonly emails: EmailEngagementMarksRepository,
    private readonly engagements: EmailEngagementsRepository,
    private readonly events: EngagementEventsService,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  /** Resolves once the hit is committed. */
  record(hit: EngagementHit): Promise<void> {
    return new Promise((resolve, reject) => this.coalescer.push({ hit, resolve, reject }));
  }

  private async write(batch: Pending[]): Promise<void> {
    const release = await this.afterEarlierBatchesOf(batch.map((p) => p.hit.emailId));
    try {
      await this.writeInOrder(batch);
    } finally {
      release();
    }
  }

  /**
   * Waits for the batches in flight that hold any of these emails, and returns the release of this one.
   * Two batches run at once (MAX_IN_FLIGHT), and the row lock alone would let the later one take the
   * emails first: the earlier clicks, committed after it, would then be missing from its burst count.
   */
  private async afterEarlierBatchesOf(emailIds: string[]): Promise<() => void> {
    const earlier = new Set(emailIds.map((id) => this.inFlightByEmail.get(id)).filter((p) => p !== undefined));
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const id of emailIds) this.inFlightByEmail.set(id, done);
    await Promise.all(earlier);
    return () => {
      for (const id of emailIds) if (this.inFlightByEmail.get(id) === done) this.inFlightByEmail.delete(id);
      release();
    };
  }

  private async writeInOrder(batch: Pending[]): Promise<void> {
    try {
      await this.recordMany(batch.map((p) => p.hit));
      batch.forEach((p) => p.resolve());
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      this.logger.warn({ err: (error as Error).message, size: batch.length }, 'engagement batch failed; recording its hits one by one');
    }
    await Promise.all(batch.map((p) => this.recordMany([p.hit]).then(p.resolve, p.reject)));
  }

  private recordMany(hits: EngagementHit[]): Promise<void> {
    return this.dataSource.transaction(async (tx) => {
      const readAt = performance.now();
      const emails = new Map((await this.emails.lockForEngagement(tx, { emails: uniqueEmails(hits) })).map((e) => [e.id, e]));
      // Each hit at the database's clock, less the time it waited for this write since it arrived.
      const timed = hits
        .filter((hit) => emails.get(hit.emailId)?.projectId === hit.projectId)
        .map((hit) => ({ ...hit, at: emails.get(hit.emailId)!.clockMs - (readAt - hit.receivedAt) }))
        .sort((a, b) => a.at - b.at);
      if (timed.length === 0) return;
      const reasons = await this.classify(tx, timed, emails);
      const personClicked = await this.engagements.personClickedLinks(tx, {
        clicks: timed.filter((hit, i) => hit.kind === 'CLICK' && reasons[i] === null).map((hit) => ({ ...hit, url: hit.url! })),
      });
      await this.engagements.insertMany(tx, { rows: timed.map((hit, i) => rowOf(hit, reasons[i], emails.get(hit.emailId)!)) });
      await this.engagements.addLinkClicks(tx, { links: linkClicks(timed, reasons, emails, personClicked) });
      const { marks, events } = firstMarks(timed, reasons, emails);
      await this.emails.markEngaged(tx, { marks });
      for (const [projectId, group] of events) await this.events.record(tx, projectScope(projectId), group);
    });
  }

  private async classify(
    tx: EntityManager,
    hits: (HitToClassify & { projectId: string })[],
    emails: Map<string, EngagementEmail>,
  ): Promise<(MachineReason | null)[]> {
    const clicked = hits.filter((hit) => hit.kind === 'CLICK');
    const priorClicks =
      clicked.length === 0
        ? []
        : await this.engagements.recentClicks(tx, { emails: uniqueEmails(clicked), since: new Date(clicked[0].at - BURST_LOOKBACK_MS) });
    const sentAt = new Map([...emails.values()].map((e) => [e.id, e.sentAtMs]));
    return classifyHits(hits, { sentAt, priorClicks, windowMs: this.config.machineWindowSeconds * 1000 });
  }
}

function rowOf(hit: EngagementHit & { at: number }, reason: MachineReason | null, email: EngagementEmail): EngagementRow {
  const { projectId, emailId, kind, url } = hit;
  return { projectId, emailId, campaignId: email.campaignId, kind, url, machineReason: reason, occurredAt: new Date(hit.at) };
}

function uniqueEmails(hits: readonly { emailId: string; projectId: string }[]): { emailId: string; projectId: string }[] {
  const byId = new Map(hits.map((hit) => [`${hit.emailId}:${hit.projectId}`, { emailId: hit.emailId, projectId: hit.projectId }]));
  return [...byId.values()];
}
