import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Db } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { CallCoalescer } from '../../core/database/call-coalescer.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryRepository } from './email-delivery.repository.js';
import type { ClaimedEmail } from './email-rows.js';
import { EmailOutcomeEvents, sentEvent, type OutcomeEvent } from './email-outcome-events.js';
import { isSpacedRate } from './email-queue-options.js';

/** Statements of one kind in flight at once; further calls wait and go out together in the next one. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 100;

interface Pending<In, Out> {
  input: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces the calls that arrive while earlier statements run into one statement (one round trip,
 * one commit); a lone call goes out at once, alone. If a batch fails, its calls are run one by one,
 * so one bad call (or a deadlock with another writer) cannot fail the others.
 */
class StatementBatcher<In, Out> {
  private readonly coalescer = new CallCoalescer<Pending<In, Out>>((batch) => this.write(batch), {
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
  });

  constructor(
    private readonly many: (inputs: In[]) => Promise<Out[]>,
    private readonly one: (input: In) => Promise<Out>,
    private readonly onBatchFailure: (error: unknown, size: number) => void,
  ) {}

  run(input: In): Promise<Out> {
    return new Promise((resolve, reject) => this.coalescer.push({ input, resolve, reject }));
  }

  private async write(batch: Pending<In, Out>[]): Promise<void> {
    if (batch.length > 1) {
      let results: Out[] | null = null;
      try {
        results = await this.many(batch.map((p) => p.input));
      } catch (error) {
        // Nothing of the batch was committed (one statement): run its calls one by one.
        this.onBatchFailure(error, batch.length);
      }
      if (results) {
        batch.forEach((pending, i) => pending.resolve(results[i]));
        return;
      }
    }
    await Promise.all(batch.map((p) => this.one(p.input).then(p.resolve, p.reject)));
  }
}

interface ClaimCall {
  scope: ProjectScope;
  emailId: string;
  lockSeconds: number;
}

interface SentCall {
  scope: ProjectScope;
  email: ClaimedEmail;
  providerMessageId: string;
}

/**
 * The delivery worker's two statements per email, claim and SENT, shared by the jobs that run at the
 * same time (MAIL_SEND_CONCURRENCY of them per worker): each email is claimed and recorded exactly as
 * alone (EmailDeliveryRepository.claimMany / markSentMany run the same statements over many rows), but
 * the per-statement and per-commit costs, which were a third of the pipeline's CPU beyond sending the
 * message itself (bench/README.md, issue #18), are paid once per batch. A job still waits for its own
 * claim to commit before it sends, and for its own SENT to commit before it completes. A batch's SENT
 * commits with the `email.sent` events of its campaign emails (EmailOutcomeEvents), in one transaction.
 *
 * Only above the rates the limiter spaces in slots of a few emails (sendingLimiter): there a batch would
 * hold back claims that the limiter had spaced, and release them together as a burst at the relay;
 * below it there are too few emails per second for batching to matter. Those calls go straight through.
 */
@Injectable()
export class EmailDeliveryBatcher {
  private readonly logger = new Logger(EmailDeliveryBatcher.name);
  private readonly claims: StatementBatcher<ClaimCall, ClaimedEmail | null>;
  private readonly sent: StatementBatcher<SentCall, boolean>;

  private readonly batching: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly emails: EmailDeliveryRepository,
    private readonly outcomes: EmailOutcomeEvents,
    @Inject(MAIL_CONFIG) config: MailConfig,
  ) {
    this.batching = !isSpacedRate(config.ratePerSecond);
    const failed = (statement: string) => (error: unknown, size: number) =>
      this.logger.warn({ err: (error as Error).message, size }, `${statement} batch failed; running its emails one by one`);
    this.claims = new StatementBatcher(
      (calls) => this.claimMany(calls),
      (call) => this.emails.claim(this.dataSource, call.scope, { emailId: call.emailId, lockSeconds: call.lockSeconds }),
      failed('claim'),
    );
    this.sent = new StatementBatcher(
      (calls) => this.markSentMany(calls),
      (call) => this.markSentAlone(call),
      failed('SENT'),
    );
  }

  /** EmailDeliveryRepository.claim, batched. */
  claim(scope: ProjectScope, input: { emailId: string; lockSeconds: number }): Promise<ClaimedEmail | null> {
    if (!this.batching) return this.emails.claim(this.dataSource, scope, input);
    return this.claims.run({ scope, ...input });
  }

  /** EmailDeliveryRepository.markSent with the email's `email.sent` event, in one transaction; batched. */
  markSent(scope: ProjectScope, input: { email: ClaimedEmail; providerMessageId: string }): Promise<boolean> {
    if (!this.batching) return this.markSentAlone({ scope, ...input });
    return this.sent.run({ scope, ...input });
  }

  private markSentAlone(call: SentCall): Promise<boolean> {
    const input = { email: call.email, providerMessageId: call.providerMessageId };
    return this.outcomes.withEvent(call.scope, (db) => this.emails.markSent(db, call.scope, input), sentEvent(call.email));
  }

  private async claimMany(calls: ClaimCall[]): Promise<(ClaimedEmail | null)[]> {
    // One lock duration per statement: calls with another one (a config change mid-run) go alone.
    const lockSeconds = calls[0].lockSeconds;
    if (calls.some((c) => c.lockSeconds !== lockSeconds)) throw new Error('claims with different lock durations');
    const claimed = await this.emails.claimMany(this.dataSource, {
      emails: calls.map((c) => ({ emailId: c.emailId, projectId: c.scope.projectId })),
      lockSeconds,
    });
    // A claimed row is the call's own project's (the statement matches id and project together); a
    // second call for the same email (a duplicate job) finds it claimed, as it would alone.
    const taken = new Set<string>();
    return calls.map((c) => {
      const email = claimed.get(c.emailId);
      if (!email || email.projectId !== c.scope.projectId || taken.has(c.emailId)) return null;
      taken.add(c.emailId);
      return email;
    });
  }

  private markSentMany(calls: SentCall[]): Promise<boolean[]> {
    const update = async (db: Db) => {
      const changed = await this.emails.markSentMany(db, {
        emails: calls.map((c) => ({ emailId: c.email.id, projectId: c.scope.projectId, providerMessageId: c.providerMessageId })),
      });
      // Like one by one: only the first call for an email changes it (and records its event).
      return calls.map((c) => changed.delete(c.email.id));
    };
    // Each call's `email.sent` event, if its email has one (campaign and workflow emails).
    const events = calls.map((c) => sentEvent(c.email));
    // A batch without such emails has no event to commit with its SENT: its one UPDATE is atomic alone,
    // and BEGIN and COMMIT were two of the three round trips per batch (as `withEvent` for one).
    if (events.every((e) => e === null)) return update(this.dataSource);
    return this.dataSource.transaction(async (tx) => {
      const results = await update(tx);
      await this.outcomes.record(
        tx,
        events.filter((e, i): e is OutcomeEvent => results[i] && e !== null),
      );
      return results;
    });
  }
}
