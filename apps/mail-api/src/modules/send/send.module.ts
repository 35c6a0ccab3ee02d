import { Module } from '@nestjs/common';

/** POST /v1/send. */
@Module({})
export class SendModule {}
