import { Injectable } from '@nestjs/common';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Express, Request, Response } from 'express';
import { DomainError } from '../errors/domain-error.js';
import { QueueCatalog } from '../metrics/queue-catalog.js';
import { QueueService } from '../queue/queue.service.js';

/** Where the dashboard is served on each API. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * bull-board (the BullMQ dashboard) over the app's queues as the QueueCatalog finds them, refreshed
 * on each request. The board's own Express app is driven by QueueDashboardController, so the
 * request has passed the app's guards and errors take the app's body.
 */
@Injectable()
export class QueueDashboard {
  private readonly serverAdapter = new ExpressAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
  private readonly board: ReturnType<typeof createBullBoard>;
  private readonly router: Express;
  private shown = '';

  constructor(
    private readonly catalog: QueueCatalog,
    private readonly queues: QueueService,
  ) {
    // @bull-board/express may carry its own copy of @bull-board/api: the same shapes, distinct types.
    const serverAdapter = this.serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'];
    this.board = createBullBoard({ queues: [], serverAdapter, options: { uiConfig: { boardTitle: 'Queues' } } });
    this.router = this.serverAdapter.getRouter() as Express;
    this.router.disable('x-powered-by');
  }

  private async refresh(): Promise<void> {
    const names = await this.catalog.names();
    const key = names.join('\n');
    if (key === this.shown) return;
    this.board.replaceQueues(names.map((name) => new BullMQAdapter(this.queues.queue(name))));
    this.shown = key;
  }

  /**
   * Hands the request to the board with the URL made relative to the dashboard's path (as if the
   * board were mounted there). Resolves when the board answered; a path the board does not know is
   * a 404 in the app's error shape.
   */
  async handle(req: Request, res: Response): Promise<void> {
    await this.refresh();
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
        this.router(req, res, (err?: unknown) =>
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
