import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job, type Worker } from 'bullmq';
import type { SendMailOptions } from 'nodemailer';
import { DataSource } from 'typeorm';
import { OnJob, type Db, type OwnsQueueWorkerOptions, type QueueWorkerOptions } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { projectScope, type ProjectScope } from '../../core/scope/project-scope.js';
import { CampaignCompletion } from './campaign-completion.js';
import { addTracking } from '../engagement/email-tracking.js';
import { TrackingLinks } from '../engagement/tracking-links.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../maintenance/maintenance.queue.js';
import { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links.js';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailJob, priorityOf, type MailEmailDeliverPayload } from './email-delivery.queue.js';
import { EmailDeliveryBatcher } from './email-delivery-batcher.js';
import { EmailDeliveryRepository } from './email-delivery.repository.js';
import { EmailReadsRepository } from './email-reads.repository.js';
import type { ClaimedEmail } from './email-rows.js';
import { SuppressionsRepository } from '../suppressions/suppressions.repository.js';
import { DeliveryMetrics } from './delivery-metrics.js';
import { bouncedEvent, EmailOutcomeEvents, suppressedEvent } from './email-outcome-events.js';
import { buildMessage, domainOf } from './email-message.js';
import { emailQueueWorkerOptions } from './email-queue-options.js';
import { isPermanentFailure, MailTransport } from './mail-transport.js';
import { isThrottling, RelayPausedError, RelayThrottle } from './relay-throttle.js';
import { MarketingFeeder } from './marketing-feeder.js';
import { SendingRate } from './sending-rate.js';
import { SendSlots } from './send-slots.js';
import { unsignedReason } from './unsigned-delivery.js';
import { Verp } from './verp.js';

/** Claims of one row before it is given up: a message that kills its worker every time must stop. */
const MAX_CLAIMS = 12;
const REQUEUE_BATCH = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type DeliveryOutcome =
  { status: 'SENT' | 'FAILED' | 'SUPPRESSED'; providerMessageId?: string } | { status: 'SKIPPED'; reason: string };

/**
 * Exactly-once delivery of one email row. Postgres is the gate, BullMQ only schedules:
 *
 * 1. Claim: one UPDATE moves the row QUEUED → SENDING (or takes over a SENDING row whose claim has
 *    lapsed: its worker died) and stamps `claimed_until = now() + MAIL_SEND_LOCK_SECONDS`. Only one
 *    statement can win; a job that wins nothing (row SENT/FAILED, or held by a live claim) sends
 *    nothing, so duplicate jobs, re-adds and BullMQ's at-least-once redelivery are harmless.
 * 2. Send, then record the outcome: SENT (+ provider id), FAILED for a permanent refusal (SMTP 5xx,
 *    no verified domain unless unsigned-delivery.ts allows it), or back to QUEUED for a transient
 *    one, with the job retried by BullMQ.
 * 3. A worker killed mid-send leaves the row SENDING: BullMQ's lock (same length as the claim)
 *    lapses, another worker gets the job, and its claim succeeds once `claimed_until` has passed
 *    (until then the job waits, delayed, instead of completing unsent).
 *
 * The one window no local design closes: the relay accepted the message and the process died
 * before SENT was committed. The email is then sent again, with the same deterministic Message-ID,
 * so receivers and relays that deduplicate on it drop the copy.
 *
 * Marketing emails carry open and click tracking (MAIL_TRACKING). A campaign email's SENT is recorded
 * with the contact's `email.sent` event, a permanent refusal with `email.bounced` (any email with a
 * contact), each in its outcome's transaction (EmailOutcomeEvents); the outcome of a campaign's last
 * email completes the campaign. Deliverability (decisions.md): a recipient on the project's suppression
 * list (read by the claim) ends SUPPRESSED with `email.suppressed`; a hard bounce suppresses the
 * address; soft bounces and relay throttling are handled in onSendError. A CANCELLED email (its campaign was cancelled) is never claimed, so never sent.
 */
@Injectable()
export class EmailDeliveryJobs implements OwnsQueueWorkerOptions {
  private readonly logger = new Logger(EmailDeliveryJobs.name);
  private readonly slots: SendSlots;

  constructor(
    private readonly dataSource: DataSource,
    private readonly emails: EmailDeliveryRepository,
    private readonly emailReads: EmailReadsRepository,
    private readonly batcher: EmailDeliveryBatcher,
    private readonly transport: MailTransport,
    private readonly links: UnsubscribeLinks,
    private readonly queue: EmailDeliveryQueue,
    private readonly outcomes: EmailOutcomeEvents,
    private readonly tracking: TrackingLinks,
    private readonly campaigns: CampaignCompletion,
    private readonly suppressions: SuppressionsRepository,
    private readonly throttle: RelayThrottle,
    private readonly verp: Verp,
    private readonly metrics: DeliveryMetrics,
    private readonly rate: SendingRate,
    private readonly feeder: MarketingFeeder,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {
    this.slots = new SendSlots(config.smtpPoolSize);
  }

  /** The email queue's worker: the deployment-wide sending limiter, its concurrency and lock. */
  queueWorkerOptions(queue: string): QueueWorkerOptions | undefined {
    return queue === EMAIL_QUEUE ? emailQueueWorkerOptions(this.config) : undefined;
  }

  /** Where the email queue's worker runs: the run-time rate re-paces it, and marketing mail is fed to it. */
  queueWorkerStarted(queue: string, worker: Worker): void {
    if (queue !== EMAIL_QUEUE) return;
    this.rate.watchRate(worker);
    this.feeder.start();
  }

  @OnJob({ queue: EMAIL_QUEUE, name: MailEmailJob.Deliver })
  async deliver(job: Job<MailEmailDeliverPayload>): Promise<DeliveryOutcome> {
    const { emailId, projectId } = job.data;
    if (!UUID.test(emailId) || !UUID.test(projectId)) throw new UnrecoverableError(`malformed email job ${job.id}`);
    const scope = projectScope(projectId);
    // The relay throttled: every worker waits for the pause to end, without claiming anything.
    const pausedUntil = await this.throttle.pausedUntil();
    if (pausedUntil) return this.waitForRelay(job, pausedUntil);
    // Batched with the claims of the jobs running alongside (EmailDeliveryBatcher).
    const email = await this.batcher.claim(scope, { emailId, lockSeconds: this.config.sendLockSeconds });
    if (!email) return this.notClaimed(job, scope);
    // Read by the claim itself (one indexed lookup): a suppression added after the email was queued applies.
    if (email.suppressedReason) return this.markSuppressed(scope, email, email.suppressedReason);
    const refusal = this.refusal(email);
    if (refusal) {
      await this.emails.markFailed(this.dataSource, scope, { email, error: refusal });
      this.metrics.count('failed');
      this.completeCampaign(email);
      return { status: 'FAILED' };
    }
    const message = this.message(email);
    let handOff: { sent: { providerMessageId: string } } | { pausedUntil: number };
    try {
      handOff = await this.whileClaimed(scope, email, () =>
        // With a free connection, right before the message goes on the wire: a slot of the deployment-wide
        // rate (SendingRate, across every worker), then is the relay paused?
        this.slots.run(async () => {
          await this.rate.admit(job.opts.priority ?? 0);
          const pausedUntil = await this.throttle.pausedUntil();
          if (pausedUntil) return { pausedUntil };
          try {
            return { sent: await this.metrics.timed(() => this.transport.send(message, email.id)) };
          } catch (err) {
            // Held at the gate before MAIL FROM (MailTransport): nothing went out.
            if (err instanceof RelayPausedError) return { pausedUntil: await this.pauseEnd() };
            throw err;
          }
        }, job.opts.priority ?? 0),
      );
    } catch (err) {
      return this.onSendError(job, scope, email, err);
    }
    if ('pausedUntil' in handOff) {
      // A pause that began while this email was claimed or waiting for a connection: back untouched.
      await this.emails.releaseUntouched(this.dataSource, scope, { email });
      return this.waitForRelay(job, handOff.pausedUntil);
    }
    const { sent } = handOff;
    await this.markSent(scope, email, sent.providerMessageId);
    this.metrics.count('sent');
    return { status: 'SENT', providerMessageId: sent.providerMessageId };
  }

  private message(email: ClaimedEmail): SendMailOptions {
    const marketing = email.type === 'MARKETING';
    const unsubscribeUrl = marketing ? this.links.urlFor(email.projectId, email.contactId!) : null;
    const unsigned = email.dkim ? null : unsignedReason(this.config, domainOf(email.fromEmail));
    const tracked = marketing && this.config.tracking ? this.tracked(email) : null;
    return buildMessage(email, unsubscribeUrl, unsigned, tracked, this.verp.returnPathFor(email.id));
  }

  /** SUPPRESSED, with the contact's `email.suppressed` event, in one transaction; never handed to SMTP. */
  private async markSuppressed(scope: ProjectScope, email: ClaimedEmail, reason: string): Promise<DeliveryOutcome> {
    const write = (db: Db) => this.emails.markSuppressed(db, scope, { email, reason });
    await this.outcomes.withEvent(scope, write, suppressedEvent(email, reason));
    this.metrics.count('suppressed');
    this.completeCampaign(email);
    return { status: 'SUPPRESSED' };
  }

  /** The job waits (delayed, no attempt spent) until the relay pause ends, plus a jitter so workers do not resume in step. */
  /** When a send held at the gate may try again: the pause's end, at least the base backoff from now. */
  private async pauseEnd(): Promise<number> {
    return Math.max(await this.throttle.pausedUntil(), Date.now() + this.config.deliverability.throttleBackoffMs);
  }

  private async waitForRelay(job: Job<MailEmailDeliverPayload>, untilMs: number): Promise<never> {
    await job.moveToDelayed(untilMs + Math.floor(Math.random() * 100), job.token);
    throw new DelayedError();
  }

  /** The HTML with its links through signed click redirects and an open pixel (engagement module). */
  private tracked(email: ClaimedEmail): string {
    const target = { projectId: email.projectId, emailId: email.id };
    return addTracking(email.html, {
      open: this.tracking.openUrl(target),
      click: (url) => this.tracking.clickUrl(target, url),
      keep: (url) => this.tracking.isOwnLink(url),
    });
  }

  /** SENT, with a campaign email's `email.sent` event (EmailDeliveryBatcher), then the campaign's completion. */
  private async markSent(scope: ProjectScope, email: ClaimedEmail, providerMessageId: string): Promise<void> {
    await this.batcher.markSent(scope, { email, providerMessageId });
    this.completeCampaign(email);
  }

  /**
   * FAILED; a bounce (permanent SMTP refusal) of an email to a contact commits with its `email.bounced`
   * event (only the call that recorded the failure writes it, so never twice) and puts the address on
   * the project's suppression list (HARD_BOUNCE, source `smtp`, the server's reply as detail).
   */
  private async markFailed(scope: ProjectScope, email: ClaimedEmail, error: string, bounced: boolean): Promise<void> {
    const event = bounced ? bouncedEvent(email, error) : null;
    const write = async (db: Db) => {
      const changed = await this.emails.markFailed(db, scope, { email, error, bounced });
      if (changed && bounced) {
        await this.suppressions.insert(db, scope, { email: email.toEmail, reason: 'HARD_BOUNCE', source: 'smtp', detail: error });
      }
      return changed;
    };
    await this.outcomes.withEvent(scope, write, event);
    this.metrics.count(bounced ? 'bounced' : 'failed');
    this.completeCampaign(email);
  }

  /** A campaign becomes SENT shortly after the outcome of its last unfinished email (CampaignCompletion). */
  private completeCampaign(email: ClaimedEmail): void {
    if (email.campaignId) this.campaigns.soon(email.projectId, email.campaignId);
  }

  /**
   * Keeps the row's claim alive during a slow send, like BullMQ renews the job's lock: the claim
   * must only lapse when this process is gone, not because a relay is slow.
   */
  private async whileClaimed<T>(scope: ProjectScope, email: ClaimedEmail, send: () => Promise<T>): Promise<T> {
    const lockSeconds = this.config.sendLockSeconds;
    const timer = setInterval(
      () => {
        this.emails
          .extendClaim(this.dataSource, scope, { email, lockSeconds })
          .catch((err: Error) => this.logger.warn({ emailId: email.id, err: err.message }, 'claim renewal failed'));
      },
      (lockSeconds * 1000) / 2,
    );
    try {
      return await send();
    } finally {
      clearInterval(timer);
    }
  }

  /** Why a claimed email must not be sent at all (recorded as FAILED), or null. */
  private refusal(email: ClaimedEmail): string | null {
    if (email.attempts > MAX_CLAIMS) return `gave up after ${MAX_CLAIMS} delivery attempts`;
    if (!email.dkim && !unsignedReason(this.config, domainOf(email.fromEmail))) {
      return `no verified domain for the from address ${email.fromEmail}: verify its domain to send from it`;
    }
    // Marketing mail queued before the contact unsubscribed (or was deleted) must not go out after it;
    // without a contact it could not carry the unsubscribe link it must have either.
    if (email.type === 'MARKETING' && email.contactSubscribed === false) return 'contact unsubscribed before delivery';
    if (email.type === 'MARKETING' && email.contactSubscribed === null) return 'contact deleted before delivery';
    return null;
  }

  /**
   * The claim found nothing. A finished (or unknown) email: done. A live claim elsewhere: this job
   * came back early (BullMQ's lock lapsed a moment before the row's claim did, or a duplicate job):
   * wait until the claim expires and look again, without spending an attempt.
   */
  private async notClaimed(job: Job<MailEmailDeliverPayload>, scope: ProjectScope): Promise<DeliveryOutcome> {
    const state = await this.emailReads.state(this.dataSource, scope, job.data.emailId);
    if (!state || !['QUEUED', 'SENDING'].includes(state.status)) {
      return { status: 'SKIPPED', reason: state ? `already ${state.status}` : 'no such email' };
    }
    const until = Math.max(state.claimedUntil?.getTime() ?? 0, Date.now()) + 250 + Math.floor(Math.random() * 250);
    await job.moveToDelayed(until, job.token);
    throw new DelayedError();
  }

  /**
   * What a refused or failed hand-off means (decisions.md "Deliverability"):
   * - relay throttling (421, 454, "rate exceeded"): not a bounce, not a failure. The row goes back
   *   untouched, every worker pauses (RelayThrottle) and this job waits for the pause to end;
   * - SMTP 5xx: refused for good, FAILED now, the address suppressed (markFailed);
   * - SMTP 4xx: a soft bounce, retried after the next MAIL_SOFT_BOUNCE_DELAYS_MS delay (the job
   *   waits, delayed); after the last one, FAILED. Never suppresses;
   * - anything else (connection trouble): the row goes back to QUEUED and the thrown error makes
   *   BullMQ retry with backoff; on the last attempt the row is FAILED instead.
   */
  private async onSendError(job: Job<MailEmailDeliverPayload>, scope: ProjectScope, email: ClaimedEmail, err: unknown): Promise<never> {
    const message = describeError(err);
    if (isThrottling(err)) {
      // The pause first (every worker stops sooner; this process's gate is closed until it is stored).
      const pausedUntil = await this.throttle.throttled(message).catch(() => this.pauseEnd());
      await this.emails.releaseUntouched(this.dataSource, scope, { email });
      this.metrics.count('throttled');
      return this.waitForRelay(job, pausedUntil);
    }
    if (isPermanentFailure(err)) {
      await this.markFailed(scope, email, message, true);
      throw new UnrecoverableError(message);
    }
    const code = (err as { responseCode?: unknown }).responseCode;
    if (typeof code === 'number' && code >= 400) return this.onSoftBounce(job, scope, email, message);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (lastAttempt) {
      await this.markFailed(scope, email, message, false);
      throw new UnrecoverableError(message);
    }
    await this.emails.release(this.dataSource, scope, { email, error: message });
    throw err instanceof Error ? err : new Error(message);
  }

  private async onSoftBounce(job: Job<MailEmailDeliverPayload>, scope: ProjectScope, email: ClaimedEmail, message: string): Promise<never> {
    const delays = this.config.deliverability.softBounceDelaysMs;
    if (email.softBounces >= delays.length) {
      await this.markFailed(scope, email, `${message} (still refused after ${delays.length} retries)`, false);
      throw new UnrecoverableError(message);
    }
    const released = await this.emails.releaseSoftBounce(this.dataSource, scope, { email, error: message });
    if (released === null) throw new UnrecoverableError(`claim of ${email.id} lost during a soft bounce`);
    this.logger.log({ emailId: email.id, softBounces: released, retryInMs: delays[email.softBounces] }, 'soft bounce: retrying later');
    await job.moveToDelayed(Date.now() + delays[email.softBounces], job.token);
    throw new DelayedError();
  }

  /**
   * Rebuilds the email queue from Postgres (repeatable, every minute): every email that should have
   * a job but has none in Redis (lost with Redis, or dropped) gets one again. The job id is the email
   * id, so the add cannot duplicate a job that exists; the existence check first keeps a long
   * campaign backlog from being re-sent to Redis every minute.
   */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.RequeueEmails })
  async requeue(): Promise<{ checked: number; requeued: number }> {
    let checked = 0;
    let requeued = 0;
    let after: { queuedAt: string; id: string } | null = null;
    for (;;) {
      const page = await this.emailReads.unfinished(this.dataSource, { after, limit: REQUEUE_BATCH });
      if (page.length === 0) break;
      const existing = await this.queue.existingJobIds(page.map((e) => e.id));
      const missing = page.filter((e) => !existing.has(e.id));
      await this.queue.enqueue(missing.map((e) => ({ id: e.id, projectId: e.projectId, priority: priorityOf(e) })));
      checked += page.length;
      requeued += missing.length;
      const last = page[page.length - 1];
      after = { queuedAt: last.queuedAt, id: last.id };
      if (page.length < REQUEUE_BATCH) break;
    }
    if (requeued > 0) this.logger.warn({ checked, requeued }, 're-enqueued emails that had no job');
    return { checked, requeued };
  }
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { code, responseCode, response } = err as Error & { code?: string; responseCode?: number; response?: string };
  const detail = response ?? err.message;
  return [responseCode ? `SMTP ${responseCode}` : code, detail].filter(Boolean).join(': ');
}
