import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ContactDataPrimitive } from '@app/contracts';

/**
 * A project's contact. One per (project, lower(email)); the writes go through ContactsRepository's SQL
 * (an upsert and a jsonb merge), this mapping serves the reads and documents the table.
 */
@Entity({ name: 'contacts' })
export class Contact {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ type: 'text' }) email: string;
  @Column({ type: 'boolean', default: true }) subscribed: boolean;
  @Column({ type: 'jsonb', default: {} }) data: Record<string, ContactDataPrimitive>;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
