import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ContactDataPrimitive } from '@app/contracts';

/** One event recorded by POST /v1/track for a contact. Written only by the track statement. */
@Entity({ name: 'events' })
export class TrackedEvent {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'project_id', type: 'uuid' }) projectId: string;
  @Column({ name: 'contact_id', type: 'uuid' }) contactId: string;
  @Column({ type: 'text' }) name: string;
  /** Every value the track call carried (persistent or not), unwrapped from `{value, persistent}`. */
  @Column({ type: 'jsonb', default: {} }) data: Record<string, ContactDataPrimitive>;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
