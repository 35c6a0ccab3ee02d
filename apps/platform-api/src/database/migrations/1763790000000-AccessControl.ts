import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Sessions, reset/invitation tokens, user ACLs, consents, locale and sidebar preferences. */
export class AccessControl1763790000000 implements MigrationInterface {
  name = 'AccessControl1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN locale text`);
    await q.query(`
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        session_token_hash text NOT NULL UNIQUE,
        refresh_token_hash text UNIQUE,
        remember boolean NOT NULL DEFAULT false,
        expires_at timestamptz NOT NULL,
        ip text,
        user_agent text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX sessions_tenant_user_idx ON sessions (tenant_id, user_id)`);
    await q.query(`CREATE INDEX sessions_expires_idx ON sessions (expires_at)`);
    await q.query(`
      CREATE TABLE auth_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('password_reset', 'invitation')),
        token_hash text NOT NULL UNIQUE,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX auth_tokens_tenant_user_idx ON auth_tokens (tenant_id, user_id, purpose)`);
    await q.query(`
      CREATE TABLE user_acls (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        is_super_admin boolean NOT NULL DEFAULT false,
        features text[] NOT NULL DEFAULT '{}',
        organizations jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (tenant_id, user_id)
      )`);
    await q.query(`
      CREATE TABLE user_consents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        consent_type text NOT NULL,
        is_granted boolean NOT NULL,
        granted_at timestamptz,
        withdrawn_at timestamptz,
        ip_address text,
        source text,
        integrity_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX user_consents_tenant_user_idx ON user_consents (tenant_id, user_id)`);
    await q.query(`
      CREATE TABLE sidebar_preferences (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        scope text NOT NULL CHECK (scope IN ('user', 'role')),
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        role_id uuid REFERENCES roles(id) ON DELETE CASCADE,
        locale text NOT NULL,
        settings jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((scope = 'user' AND user_id IS NOT NULL AND role_id IS NULL)
            OR (scope = 'role' AND role_id IS NOT NULL AND user_id IS NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX sidebar_preferences_user_uq ON sidebar_preferences (tenant_id, user_id, locale) WHERE scope = 'user'`,
    );
    await q.query(
      `CREATE UNIQUE INDEX sidebar_preferences_role_uq ON sidebar_preferences (tenant_id, role_id, locale) WHERE scope = 'role'`,
    );
    await q.query(`
      CREATE TABLE sidebar_variants (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        locale text NOT NULL,
        name text NOT NULL,
        is_active boolean NOT NULL DEFAULT false,
        settings jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz,
        UNIQUE (tenant_id, user_id, locale, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sidebar_variants, sidebar_preferences, user_consents, user_acls, auth_tokens, sessions`);
    await q.query(`ALTER TABLE users DROP COLUMN locale`);
  }
}
