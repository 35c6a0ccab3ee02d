import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CallCoalescer } from '../../core/database/call-coalescer.js';
import { projectScope } from '../../core/scope/project-scope.js';
import { EngagementEventsService, type SystemEvent } from './engagement-events.service.js';

/** Inserts in flight at once; further events wait and go out together in the next one. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 200;

interface Pending {
  projectId: string;
  event: SystemEvent;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The events of the delivery worker's concurrent jobs (`email.sent` of every campaign email), recorded
 * together: the events that arrive while earlier inserts run go out in one EngagementEventsService.record
 * per project (one statement, one commit, one workflow check) instead of one each. A lone event goes
 * out at once. If a batch fails, its events are recorded one by one, so one cannot fail the others.
 */
@Injectable()
export class EngagementEventBatcher {
  private readonly logger = new Logger(EngagementEventBatcher.name);
  private readonly coalescer = new CallCoalescer<Pending>((batch) => this.write(batch), {
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
  });

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EngagementEventsService,
  ) {}

  /** Resolves once the event is committed. */
  record(projectId: string, event: SystemEvent): Promise<void> {
    return new Promise((resolve, reject) => this.coalescer.push({ projectId, event, resolve, reject }));
  }

  private async write(batch: Pending[]): Promise<void> {
    const byProject = new Map<string, Pending[]>();
    for (const pending of batch) byProject.set(pending.projectId, [...(byProject.get(pending.projectId) ?? []), pending]);
    await Promise.all([...byProject.values()].map((group) => this.writeGroup(group)));
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    const scope = projectScope(group[0].projectId);
    try {
      await this.events.record(
        this.dataSource,
        scope,
        group.map((p) => p.event),
      );
      group.forEach((p) => p.resolve());
      return;
    } catch (error) {
      if (group.length === 1) {
        group[0].reject(error);
        return;
      }
      this.logger.warn({ err: (error as Error).message, size: group.length }, 'event batch failed; recording its events one by one');
    }
    await Promise.all(group.map((p) => this.events.record(this.dataSource, scope, [p.event]).then(() => p.resolve(), p.reject)));
  }
}
