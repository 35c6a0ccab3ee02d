import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { NotificationSettings as Settings } from './notification-settings.js';

/** A tenant's delivery settings (GET/POST /notifications/settings); absent row: the defaults. */
@Entity({ name: 'notification_settings' })
export class NotificationSettingsRow {
  @PrimaryColumn({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ type: 'jsonb' }) settings: Settings;
  @Column({ name: 'updated_by_user_id', type: 'uuid', nullable: true }) updatedByUserId: string | null;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
