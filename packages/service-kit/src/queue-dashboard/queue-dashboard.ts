import { Injectable } from '@nestjs/common';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import type { Express, Request, Response } from 'express';
import { DomainError } from '../errors/domain-error.js';
import { QueueCatalog } from '../metrics/queue-catalog.js';
import { QueueService } from '../queue/queue.service.js';

/** Where the dashboard is served on each API. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** One bull-board over the app's queues, every queue read-only or none. */
class Board {
  private readonly board: ReturnType<typeof createBullBoard>;
  readonly router: Express;
  private shown = '';

  constructor(private readonly readOnlyMode: boolean) {
    const adapter = new ExpressAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
    // @bull-board/express may carry its own copy of @bull-board/api: the same shapes, distinct types.
    const serverAdapter = adapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'];
    this.board = createBullBoard({ queues: [], serverAdapter, options: { uiConfig: { boardTitle: 'Queues' } } });
    this.router = adapter.getRouter() as Express;
    this.router.disable('x-powered-by');
  }

  show(names: string[], queue: (name: string) => Queue): void {
    const key = names.join('\n');
    if (key === this.shown) return;
    this.board.replaceQueues(names.map((name) => new BullMQAdapter(queue(name), { readOnlyMode: this.readOnlyMode })));
    this.shown = key;
  }
}

/**
 * bull-board (the BullMQ dashboard) over the app's queues as the QueueCatalog finds them, refreshed
 * on each request: a read-only board (bull-board's `readOnlyMode`: no mutating buttons, its API
 * refuses writes) for readers, a writable one for callers the controller let write. The board's own
 * Express app is driven by QueueDashboardController, so the request has passed the app's guards and
 * the write allowlist, and errors take the app's body.
 */
@Injectable()
export class QueueDashboard {
  private readonly readOnly = new Board(true);
  private readonly writable = new Board(false);

  constructor(
    private readonly catalog: QueueCatalog,
    private readonly queues: QueueService,
  ) {}

  /**
   * Hands the request to the board with the URL made relative to the dashboard's path (as if the
   * board were mounted there). Resolves when the board answered; a path the board does not know is
   * a 404 in the app's error shape.
   */
  async handle(req: Request, res: Response, canWrite = false): Promise<void> {
    const board = canWrite ? this.writable : this.readOnly;
    board.show(await this.catalog.names(), (name) => this.queues.queue(name));
    const { url, baseUrl } = req;
    const rest = url.slice(QUEUE_DASHBOARD_PATH.length);
    req.url = rest.startsWith('/') ? rest : `/${rest}`;
    req.baseUrl = QUEUE_DASHBOARD_PATH;
    const requestProto = Object.getPrototypeOf(req) as object;
    const responseProto = Object.getPrototypeOf(res) as object;
    try {
      await new Promise<void>((resolve, reject) => {
        res.once('finish', resolve);
        res.once('close', resolve);
        board.router(req, res, (err?: unknown) =>
          err ? reject(err instanceof Error ? err : new Error('queue dashboard failed')) : reject(DomainError.notFound()),
        );
      });
    } finally {
      // The board's Express app swaps in its own request/response prototypes: give the app's back.
      Object.setPrototypeOf(req, requestProto);
      Object.setPrototypeOf(res, responseProto);
      req.url = url;
      req.baseUrl = baseUrl;
    }
  }
}
