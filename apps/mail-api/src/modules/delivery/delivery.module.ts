import { Module } from '@nestjs/common';

/** The email queue: producer (API) and the throttled delivery processor (worker). */
@Module({})
export class DeliveryModule {}
