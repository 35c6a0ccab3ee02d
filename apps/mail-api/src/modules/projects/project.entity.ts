import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A mail project: the tenant of the mail service. Its API keys are stored only as SHA-256 hashes
 * (see project-keys.ts); `secretKeyPrefix` is the only clear part, for telling keys apart.
 */
@Entity({ name: 'projects' })
export class Project {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ name: 'secret_key_hash', type: 'text', unique: true }) secretKeyHash: string;
  @Column({ name: 'public_key_hash', type: 'text', unique: true }) publicKeyHash: string;
  @Column({ name: 'secret_key_prefix', type: 'text' }) secretKeyPrefix: string;
  /** A disabled project's keys still identify it, but every request is refused (403). */
  @Column({ type: 'boolean', default: false }) disabled: boolean;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
