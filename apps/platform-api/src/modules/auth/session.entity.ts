import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A login. Only hashes of its session and refresh tokens are stored. */
@Entity({ name: 'sessions' })
export class Session {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ name: 'user_id', type: 'uuid' }) userId: string;
  @Column({ name: 'session_token_hash', type: 'text' }) sessionTokenHash: string;
  @Column({ name: 'refresh_token_hash', type: 'text', nullable: true }) refreshTokenHash: string | null;
  @Column({ type: 'boolean', default: false }) remember: boolean;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
  @Column({ type: 'text', nullable: true }) ip: string | null;
  @Column({ name: 'user_agent', type: 'text', nullable: true }) userAgent: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
