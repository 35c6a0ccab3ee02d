import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type AuthTokenPurpose = 'password_reset' | 'invitation';

/** Single-use password-reset and invitation setup tokens (a hash, and the token sealed until its email is sent). */
@Entity({ name: 'auth_tokens' })
export class AuthToken {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId: string;
  @Column({ name: 'user_id', type: 'uuid' }) userId: string;
  @Column({ type: 'text' }) purpose: AuthTokenPurpose;
  @Column({ name: 'token_hash', type: 'text' }) tokenHash: string;
  /** AES-256-GCM sealed token for the worker that emails the link (token-sealing.ts); null once sent. */
  @Column({ name: 'sealed_token', type: 'text', nullable: true }) sealedToken: string | null;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
  @Column({ name: 'used_at', type: 'timestamptz', nullable: true }) usedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
