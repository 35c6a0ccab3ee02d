import { All, Controller, DynamicModule, Inject, Module, Req, Res, type Type } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DomainError } from '../errors/domain-error.js';
import { Public } from '../http/public.decorator.js';
import { allowedDashboardWrite, type QueueDashboardAccess } from './queue-dashboard-access.js';
import { QUEUE_DASHBOARD_PATH, QueueDashboard } from './queue-dashboard.js';

const READS = new Set(['GET', 'HEAD']);

export interface QueueDashboardOptions {
  /**
   * true: the app's authentication guard lets the routes through (`@Public`) and `authorize` alone
   * decides (mail: an admin token). false: the app's guard authenticates first (platform: a JWT),
   * then `authorize` checks the caller (a super administrator).
   */
  publicRoute: boolean;
  /** The app's injectable access policy: who reads, who writes, where writes are recorded. */
  access: Type<QueueDashboardAccess>;
}

const DASHBOARD_ACCESS = Symbol('QUEUE_DASHBOARD_ACCESS');
const ROUTE = QUEUE_DASHBOARD_PATH.slice(1);

@ApiExcludeController()
@Controller()
class QueueDashboardController {
  constructor(
    private readonly dashboard: QueueDashboard,
    @Inject(DASHBOARD_ACCESS) private readonly access: QueueDashboardAccess,
  ) {}

  /**
   * Read-only unless the caller may write; even then only retry, promote and clean pass (403 for
   * anything else: obliterate, edit job data, ...), each recorded before it runs.
   */
  @All([ROUTE, `${ROUTE}/*path`])
  async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.access.authorize(req, res);
    const canWrite = await this.access.canWrite(req);
    if (!READS.has(req.method)) {
      if (!canWrite) throw DomainError.forbidden('the queue dashboard is read-only for you: writes need the queue write permission');
      const write = allowedDashboardWrite(req.method, req.url.slice(QUEUE_DASHBOARD_PATH.length));
      if (!write) throw DomainError.forbidden('the queue dashboard allows only retry, promote and clean');
      await this.access.recordWrite(req, write);
    }
    await this.dashboard.handle(req, res, canWrite);
  }
}

@ApiExcludeController()
@Public()
@Controller()
class PublicQueueDashboardController extends QueueDashboardController {
  // A handler of its own: route guards are bound per handler (bindRouteGuards), and unlike the
  // inherited one this route needs no authentication guard.
  @All([ROUTE, `${ROUTE}/*path`])
  override async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    await super.serve(req, res);
  }
}

@Module({})
class QueueDashboardCoreModule {}

/**
 * bull-board at `/admin/queues` (UI and its JSON API) behind the app's `access` policy: read-only
 * (no mutating buttons, writes 403) unless `canWrite`; needs the MetricsModule (its QueueCatalog
 * finds the queues) and the QueueModule. Left out of the OpenAPI document.
 */
export class QueueDashboardModule {
  static forRoot(options: QueueDashboardOptions): DynamicModule {
    return {
      module: QueueDashboardCoreModule,
      controllers: [options.publicRoute ? PublicQueueDashboardController : QueueDashboardController],
      providers: [{ provide: DASHBOARD_ACCESS, useClass: options.access }, QueueDashboard],
    };
  }
}
