import { Module } from '@nestjs/common';

/** Per-user notifications with fan-out to roles and features (/notifications/*). */
@Module({})
export class NotificationsModule {}
