import { Injectable } from '@nestjs/common';
import { queryPrepared, type Db } from '@app/service-kit';

export interface EngagementEmail {
  id: string;
  projectId: string;
  contactId: string | null;
  campaignId: string | null;
  /** When it was handed to SMTP (epoch ms); null: not recorded (yet). */
  sentAtMs: number | null;
  /** A person's open / click, a machine's open / click, recorded before. */
  opened: boolean;
  clicked: boolean;
  machineOpened: boolean;
  machineClicked: boolean;
  /** The database's clock when the row was read (epoch ms). */
  clockMs: number;
}

/** The first opens and clicks a batch records for one email (null: none of that kind). */
export interface EngagementMarks {
  emailId: string;
  projectId: string;
  openedAt: Date | null;
  clickedAt: Date | null;
  machineOpenedAt: Date | null;
  machineClickedAt: Date | null;
}

/**
 * The engagement columns of `emails` (`opened_at`, `clicked_at`, `machine_opened_at`,
 * `machine_clicked_at`) and their only writer, as the feeder's `fed_at` is MarketingFeedRepository's:
 * an engagement batch locks its emails, then records their first opens and clicks in one statement.
 * Every other column of `emails` is EmailDeliveryRepository's.
 */
@Injectable()
export class EmailEngagementMarksRepository {
  /**
   * The emails an engagement batch records opens and clicks of, locked (FOR UPDATE, in id order, so
   * concurrent batches wait for each other instead of deadlocking) until the batch commits: the burst
   * rule then sees every earlier click. Matched by id and project together (a batch may hold several
   * projects' emails). `clockMs`: the database's clock when this statement arrived, in epoch milliseconds:
   * not after the lock wait (clock_timestamp() is re-read after waiting on a row another batch updated, which
   * moved a waiting batch's clicks a whole lock wait later and split a burst across batches).
   */
  lockForEngagement(tx: Db, input: { emails: { emailId: string; projectId: string }[] }): Promise<EngagementEmail[]> {
    return queryPrepared<EngagementEmail>(
      tx,
      `SELECT id, project_id AS "projectId", contact_id AS "contactId", campaign_id AS "campaignId",
              (extract(epoch FROM sent_at) * 1000)::float8 AS "sentAtMs",
              opened_at IS NOT NULL AS opened, clicked_at IS NOT NULL AS clicked,
              machine_opened_at IS NOT NULL AS "machineOpened", machine_clicked_at IS NOT NULL AS "machineClicked",
              (extract(epoch FROM statement_timestamp()) * 1000)::float8 AS "clockMs"
         FROM emails
        WHERE (id, project_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))
        ORDER BY id
          FOR UPDATE`,
      [input.emails.map((e) => e.emailId), input.emails.map((e) => e.projectId)],
    );
  }

  /**
   * First opens and clicks of emails locked by lockForEngagement: a person's (`opened_at`,
   * `clicked_at`) and a machine's (`machine_opened_at`, `machine_clicked_at`); a timestamp already set
   * is kept. One statement for the whole batch.
   */
  async markEngaged(tx: Db, input: { marks: EngagementMarks[] }): Promise<void> {
    const { marks } = input;
    if (marks.length === 0) return;
    await queryPrepared(
      tx,
      `UPDATE emails e
          SET opened_at = coalesce(e.opened_at, m.opened_at), clicked_at = coalesce(e.clicked_at, m.clicked_at),
              machine_opened_at = coalesce(e.machine_opened_at, m.machine_opened_at),
              machine_clicked_at = coalesce(e.machine_clicked_at, m.machine_clicked_at)
         FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
              AS m(id, project_id, opened_at, clicked_at, machine_opened_at, machine_clicked_at)
        WHERE e.id = m.id AND e.project_id = m.project_id`,
      [
        marks.map((m) => m.emailId),
        marks.map((m) => m.projectId),
        marks.map((m) => m.openedAt),
        marks.map((m) => m.clickedAt),
        marks.map((m) => m.machineOpenedAt),
        marks.map((m) => m.machineClickedAt),
      ],
    );
  }
}
