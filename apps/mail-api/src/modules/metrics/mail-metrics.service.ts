import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsRegistry } from '@app/service-kit';
import { MetricsRepository, type StatusCountRow } from './metrics.repository.js';

/** Counts are reused for this long: scrapes every few seconds, from several Prometheus servers, cost one read. */
export const MAIL_METRICS_CACHE_MS = 15_000;
const STATEMENT_TIMEOUT_MS = 5_000;
/** Always reported after a successful read (0 when none), so a backlog alert has a series before the first such row. */
const EMAIL_STATUSES = ['QUEUED', 'SENDING'];
const CAMPAIGN_STATUSES = ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED'];

/** Counts by status with every known status present. */
function withKnownStatuses(rows: StatusCountRow[], known: string[]): Map<string, number> {
  const counts = new Map(known.map((status) => [status, 0]));
  for (const row of rows) counts.set(row.status, row.count);
  return counts;
}

interface MailSnapshot {
  emails: StatusCountRow[];
  campaigns: StatusCountRow[];
  /** The SENDING campaigns together: audience size, recipients by planning status, emails by delivery status. */
  sendingAudience: number;
  campaignEmails: StatusCountRow[];
  campaignRecipients: StatusCountRow[];
}

const EMPTY: MailSnapshot = { emails: [], campaigns: [], sendingAudience: 0, campaignEmails: [], campaignRecipients: [] };

/** A gauge's collect(): the series of a successful read, none at all when the read failed. */
type Fill = (gauge: Gauge, snapshot: MailSnapshot) => void;

/**
 * The mail-api's own gauges on `GET /metrics`, read from Postgres when Prometheus scrapes (cached for
 * 15 s): emails by status, campaigns by status, and the progress of the SENDING campaigns together
 * (audience size, recipients by planning status, emails by delivery status). No label carries a
 * project or campaign id (decisions.md "Operator contract": per-customer ids leak and multiply series).
 * Emails are counted for the backlog only (QUEUED, SENDING; an index-backed read). A failed read is logged and
 * leaves the gauges empty for that scrape; it never fails `/metrics`.
 */
@Injectable()
export class MailMetricsService implements OnModuleInit {
  private readonly logger = new Logger(MailMetricsService.name);
  private cached: { at: number; snapshot: Promise<MailSnapshot | null> } | null = null;
  private readErrors: Counter | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: MetricsRepository,
    private readonly metrics: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const registers = [this.metrics.registry];
    const gauge = (name: string, help: string, labelNames: string[], fill: Fill) => {
      const snapshot = () => this.snapshot();
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const read = await snapshot();
          this.reset();
          if (read) fill(this, read);
        },
      });
    };
    gauge('mail_emails', 'Unfinished emails (QUEUED, SENDING) by status, all projects', ['status'], (g, { emails }) => {
      for (const [status, count] of withKnownStatuses(emails, EMAIL_STATUSES)) g.set({ status }, count);
    });
    gauge('mail_campaigns', 'Campaigns by status (all projects)', ['status'], (g, { campaigns }) => {
      for (const [status, count] of withKnownStatuses(campaigns, CAMPAIGN_STATUSES)) g.set({ status }, count);
    });
    // Labelled with the campaigns' status: prom-client always prints a label-less gauge (as 0), which
    // would report an audience of 0 when the read failed.
    gauge('mail_campaign_total_recipients', 'Audience size of the SENDING campaigns together', ['status'], (g, { sendingAudience }) => {
      g.set({ status: 'SENDING' }, sendingAudience);
    });
    gauge(
      'mail_campaign_recipients',
      'Recipients of the SENDING campaigns together by planning status (PENDING, QUEUED, SKIPPED)',
      ['status'],
      (g, { campaignRecipients }) => {
        for (const row of campaignRecipients) g.set({ status: row.status }, row.count);
      },
    );
    gauge('mail_campaign_emails', 'Emails of the SENDING campaigns together by delivery status', ['status'], (g, { campaignEmails }) => {
      for (const row of campaignEmails) g.set({ status: row.status }, row.count);
    });
    const pending = () => this.cached?.snapshot;
    this.readErrors = new Counter({
      name: 'mail_metrics_read_errors_total',
      help: 'Reads of the mail gauges from Postgres that failed (their series were absent from that scrape)',
      registers,
      // Registered after the gauges, whose collect() start this scrape's read first: waits for it,
      // so a failure is counted in the same scrape that lacks the series.
      async collect() {
        await pending();
      },
    });
  }

  /** The counts of the last 15 s, or a new read (one at a time, shared by every gauge of a scrape). */
  snapshot(): Promise<MailSnapshot | null> {
    if (this.cached && Date.now() - this.cached.at < MAIL_METRICS_CACHE_MS) return this.cached.snapshot;
    const snapshot = this.read().catch((err: unknown) => {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'mail metrics unavailable');
      this.readErrors?.inc();
      this.cached = null;
      return null;
    });
    this.cached = { at: Date.now(), snapshot };
    return snapshot;
  }

  private read(): Promise<MailSnapshot> {
    // One read-only transaction: one pooled connection, a bounded statement time, consistent counts.
    return this.dataSource.transaction('REPEATABLE READ', async (tx) => {
      await this.repository.limitStatementTime(tx, STATEMENT_TIMEOUT_MS);
      const emails = await this.repository.unfinishedEmailsByStatus(tx);
      if (!(await this.repository.hasCampaignTables(tx))) return { ...EMPTY, emails };
      const campaigns = await this.repository.campaignsByStatus(tx);
      const sendingAudience = await this.repository.sendingAudience(tx);
      const campaignEmails = await this.repository.sendingCampaignEmailsByStatus(tx);
      const campaignRecipients = await this.repository.sendingCampaignRecipientsByStatus(tx);
      return { emails, campaigns, sendingAudience, campaignEmails, campaignRecipients };
    });
  }
}
