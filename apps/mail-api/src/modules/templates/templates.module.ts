import { Module } from '@nestjs/common';

/** Templates CRUD and the placeholder renderer the send path uses. */
@Module({})
export class TemplatesModule {}
