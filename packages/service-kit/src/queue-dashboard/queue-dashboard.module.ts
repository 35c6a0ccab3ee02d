import { All, Controller, DynamicModule, Inject, Module, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../http/public.decorator.js';
import { QUEUE_DASHBOARD_PATH, QueueDashboard } from './queue-dashboard.js';

/** Decides whether a request may use the dashboard: throw a `DomainError` (401, 403) to refuse it. */
export type QueueDashboardAuthorize = (req: Request, res: Response) => void | Promise<void>;

export interface QueueDashboardOptions {
  /**
   * true: the app's authentication guard lets the routes through (`@Public`) and `authorize` alone
   * decides (mail: an admin token). false: the app's guard authenticates first (platform: a JWT),
   * then `authorize` checks the caller (a super administrator).
   */
  publicRoute: boolean;
  authorize: QueueDashboardAuthorize;
}

const DASHBOARD_OPTIONS = Symbol('QUEUE_DASHBOARD_OPTIONS');
const ROUTE = QUEUE_DASHBOARD_PATH.slice(1);

@ApiExcludeController()
@Controller()
class QueueDashboardController {
  constructor(
    private readonly dashboard: QueueDashboard,
    @Inject(DASHBOARD_OPTIONS) private readonly options: QueueDashboardOptions,
  ) {}

  @All([ROUTE, `${ROUTE}/*path`])
  async serve(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.options.authorize(req, res);
    await this.dashboard.handle(req, res);
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
 * bull-board at `/admin/queues` (UI and its JSON API) behind `authorize`; needs the MetricsModule
 * (its QueueCatalog finds the queues) and the QueueModule. Left out of the OpenAPI document.
 */
export class QueueDashboardModule {
  static forRoot(options: QueueDashboardOptions): DynamicModule {
    return {
      module: QueueDashboardCoreModule,
      controllers: [options.publicRoute ? PublicQueueDashboardController : QueueDashboardController],
      providers: [{ provide: DASHBOARD_OPTIONS, useValue: options }, QueueDashboard],
    };
  }
}
