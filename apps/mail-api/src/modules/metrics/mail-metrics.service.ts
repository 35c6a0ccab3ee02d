import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsRegistry } from '@app/service-kit';
import { MetricsRepository, type CampaignStatusCountRow, type SendingCampaignRow, type StatusCountRow } from './metrics.repository.js';

/** Counts are reused for this long: scrapes every few seconds, from several Prometheus servers, cost one read. */
export const MAIL_METRICS_CACHE_MS = 15_000;
const STATEMENT_TIMEOUT_MS = 5_000;
/** Always reported (0 when none), so an alert on a status has a series before the first such row. */
const EMAIL_STATUSES = ['QUEUED', 'SENDING', 'SENT', 'FAILED', 'CANCELLED', 'SUPPRESSED', 'BOUNCED'];
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
  sending: SendingCampaignRow[];
  campaignEmails: CampaignStatusCountRow[];
  campaignRecipients: CampaignStatusCountRow[];
}

const EMPTY: MailSnapshot = { emails: [], campaigns: [], sending: [], campaignEmails: [], campaignRecipients: [] };

/**
 * The mail-api's own gauges on `GET /metrics`, read from Postgres when Prometheus scrapes (cached for
 * 15 s): emails by status, campaigns by status, and the progress of each SENDING campaign (audience
 * size, recipients by planning status, emails by delivery status). A failed read is logged and
 * leaves the gauges empty for that scrape; it never fails `/metrics`.
 */
@Injectable()
export class MailMetricsService implements OnModuleInit {
  private readonly logger = new Logger(MailMetricsService.name);
  private cached: { at: number; snapshot: Promise<MailSnapshot> } | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: MetricsRepository,
    private readonly metrics: MetricsRegistry,
  ) {}

  onModuleInit(): void {
    const snapshot = () => this.snapshot();
    const registers = [this.metrics.registry];
    new Gauge({
      name: 'mail_emails',
      help: 'Emails by delivery status (all projects)',
      labelNames: ['status'],
      registers,
      async collect() {
        const { emails } = await snapshot();
        this.reset();
        for (const [status, count] of withKnownStatuses(emails, EMAIL_STATUSES)) this.set({ status }, count);
      },
    });
    new Gauge({
      name: 'mail_campaigns',
      help: 'Campaigns by status (all projects)',
      labelNames: ['status'],
      registers,
      async collect() {
        const { campaigns } = await snapshot();
        this.reset();
        for (const [status, count] of withKnownStatuses(campaigns, CAMPAIGN_STATUSES)) this.set({ status }, count);
      },
    });
    new Gauge({
      name: 'mail_campaign_total_recipients',
      help: 'Audience size of each SENDING campaign',
      labelNames: ['campaign_id'],
      registers,
      async collect() {
        const { sending } = await snapshot();
        this.reset();
        for (const row of sending) this.set({ campaign_id: row.campaign_id }, row.total_recipients);
      },
    });
    new Gauge({
      name: 'mail_campaign_recipients',
      help: 'Recipients of each SENDING campaign by planning status (PENDING, QUEUED, SKIPPED)',
      labelNames: ['campaign_id', 'status'],
      registers,
      async collect() {
        const { campaignRecipients } = await snapshot();
        this.reset();
        for (const row of campaignRecipients) this.set({ campaign_id: row.campaign_id, status: row.status }, row.count);
      },
    });
    new Gauge({
      name: 'mail_campaign_emails',
      help: 'Emails of each SENDING campaign by delivery status',
      labelNames: ['campaign_id', 'status'],
      registers,
      async collect() {
        const { campaignEmails } = await snapshot();
        this.reset();
        for (const row of campaignEmails) this.set({ campaign_id: row.campaign_id, status: row.status }, row.count);
      },
    });
  }

  /** The counts of the last 15 s, or a new read (one at a time, shared by every gauge of a scrape). */
  snapshot(): Promise<MailSnapshot> {
    if (this.cached && Date.now() - this.cached.at < MAIL_METRICS_CACHE_MS) return this.cached.snapshot;
    const snapshot = this.read().catch((err: unknown) => {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'mail metrics unavailable');
      this.cached = null;
      return EMPTY;
    });
    this.cached = { at: Date.now(), snapshot };
    return snapshot;
  }

  private read(): Promise<MailSnapshot> {
    // One read-only transaction: one pooled connection, a bounded statement time, consistent counts.
    return this.dataSource.transaction('REPEATABLE READ', async (tx) => {
      await this.repository.limitStatementTime(tx, STATEMENT_TIMEOUT_MS);
      const emails = await this.repository.emailsByStatus(tx);
      if (!(await this.repository.hasCampaignTables(tx))) return { ...EMPTY, emails };
      const campaigns = await this.repository.campaignsByStatus(tx);
      const sending = await this.repository.sendingCampaigns(tx);
      const ids = sending.map((row) => row.campaign_id);
      const campaignEmails = await this.repository.campaignEmailsByStatus(tx, ids);
      const campaignRecipients = await this.repository.campaignRecipientsByStatus(tx, ids);
      return { emails, campaigns, sending, campaignEmails, campaignRecipients };
    });
  }
}
