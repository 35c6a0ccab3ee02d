import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One notification of one recipient (platform-api.md "Notification"; decisions.md "Notifications"). */
@Entity({ name: 'notifications' })
export class Notification {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ name: 'organization_id', type: 'uuid', nullable: true }) organizationId: string | null;
  @Column({ name: 'recipient_user_id', type: 'uuid' }) recipientUserId: string;
  /** The request or fan-out job that wrote it: unique with the recipient. */
  @Column({ name: 'batch_id', type: 'uuid' }) batchId: string;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'text' }) title: string;
  @Column({ type: 'text', nullable: true }) body: string | null;
  @Column({ name: 'title_key', type: 'text', nullable: true }) titleKey: string | null;
  @Column({ name: 'body_key', type: 'text', nullable: true }) bodyKey: string | null;
  @Column({ name: 'title_variables', type: 'jsonb', nullable: true }) titleVariables: Record<string, unknown> | null;
  @Column({ name: 'body_variables', type: 'jsonb', nullable: true }) bodyVariables: Record<string, unknown> | null;
  @Column({ type: 'text', nullable: true }) icon: string | null;
  @Column({ type: 'text' }) severity: 'info' | 'warning' | 'success' | 'error';
  @Column({ type: 'text', default: 'unread' }) status: 'unread' | 'read' | 'actioned' | 'dismissed';
  @Column({ type: 'jsonb', default: () => "'[]'" }) actions: { id: string; label: string }[];
  @Column({ name: 'source_module', type: 'text', nullable: true }) sourceModule: string | null;
  @Column({ name: 'source_entity_type', type: 'text', nullable: true }) sourceEntityType: string | null;
  @Column({ name: 'source_entity_id', type: 'text', nullable: true }) sourceEntityId: string | null;
  @Column({ name: 'link_href', type: 'text', nullable: true }) linkHref: string | null;
  @Column({ name: 'group_key', type: 'text', nullable: true }) groupKey: string | null;
  @Column({ name: 'action_taken', type: 'text', nullable: true }) actionTaken: string | null;
  @Column({ name: 'action_payload', type: 'jsonb', nullable: true }) actionPayload: Record<string, unknown> | null;
  @Column({ name: 'created_by_user_id', type: 'uuid', nullable: true }) createdByUserId: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'read_at', type: 'timestamptz', nullable: true }) readAt: Date | null;
  @Column({ name: 'actioned_at', type: 'timestamptz', nullable: true }) actionedAt: Date | null;
  @Column({ name: 'dismissed_at', type: 'timestamptz', nullable: true }) dismissedAt: Date | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
}
