import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** The features a role grants in one tenant (a global role has one ACL per tenant that uses it). */
@Entity({ name: 'role_acls' })
export class RoleAcl {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ name: 'role_id', type: 'uuid' }) roleId: string;
  @Column({ name: 'is_super_admin', type: 'boolean', default: false }) isSuperAdmin: boolean;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) features: string[];
  /** null: no organization restriction; else the organization ids the role may act in. */
  @Column({ type: 'jsonb', nullable: true }) organizations: string[] | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
