import { Injectable, Optional } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from '@app/service-kit';

export type SendOutcome = 'sent' | 'bounced' | 'suppressed' | 'failed' | 'throttled';
const OUTCOMES: SendOutcome[] = ['sent', 'bounced', 'suppressed', 'failed', 'throttled'];

/**
 * The delivery path's metrics (no project or campaign labels): `mail_emails_sent_total{outcome}` per
 * hand-off decision and `mail_smtp_send_duration_seconds` per SMTP conversation. Absent registry
 * (a test context without metrics): no-ops.
 */
@Injectable()
export class DeliveryMetrics {
  private readonly outcomes: Counter<'outcome'> | null;
  private readonly duration: Histogram | null;

  constructor(@Optional() metrics?: MetricsRegistry) {
    const registers = metrics ? [metrics.registry] : null;
    this.outcomes = registers
      ? new Counter({
          name: 'mail_emails_sent_total',
          help: 'Emails at the hand-off to SMTP by outcome: sent, bounced (5xx), suppressed, failed, throttled (returned to the queue)',
          labelNames: ['outcome'],
          registers,
        })
      : null;
    for (const outcome of OUTCOMES) this.outcomes?.inc({ outcome }, 0);
    this.duration = registers
      ? new Histogram({
          name: 'mail_smtp_send_duration_seconds',
          help: 'Time of one SMTP hand-off (accepted or refused)',
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers,
        })
      : null;
  }

  count(outcome: SendOutcome): void {
    this.outcomes?.inc({ outcome });
  }

  /** Times `send` (whether it resolves or throws). */
  async timed<T>(send: () => Promise<T>): Promise<T> {
    const end = this.duration?.startTimer();
    try {
      return await send();
    } finally {
      end?.();
    }
  }
}
