import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A per-user ACL: when present it replaces the user's role ACLs in that tenant. */
@Entity({ name: 'user_acls' })
export class UserAcl {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ name: 'user_id', type: 'uuid' }) userId: string;
  @Column({ name: 'is_super_admin', type: 'boolean', default: false }) isSuperAdmin: boolean;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) features: string[];
  @Column({ type: 'jsonb', nullable: true }) organizations: string[] | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
