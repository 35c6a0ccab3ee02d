import { Module } from '@nestjs/common';

/** Signed unsubscribe links and the public endpoint behind them. */
@Module({})
export class UnsubscribeModule {}
