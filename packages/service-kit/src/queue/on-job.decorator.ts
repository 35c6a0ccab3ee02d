import { SetMetadata } from '@nestjs/common';

export const ON_JOB = Symbol('ON_JOB');

export interface JobRoute {
  queue: string;
  name: string;
}

/**
 * Marks a provider method as the processor of one job (queue + name). The worker entry discovers
 * these at start; processors live beside their feature in `<feature>.jobs.ts`.
 */
export const OnJob = (route: JobRoute): MethodDecorator => SetMetadata(ON_JOB, route);
