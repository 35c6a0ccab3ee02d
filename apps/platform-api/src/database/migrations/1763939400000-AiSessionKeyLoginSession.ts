import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session key (POST /ai_assistant/session-key) ends with the login session that made it: logout,
 * a password reset or change, a user's deletion and a tenant's deactivation delete sessions
 * (decisions.md "Logout and password reset delete the session"), and with them, by the foreign key,
 * the keys an MCP client holds. Before, a key outlived them for up to its two hours.
 *
 * Keys made before this migration name no login session and are deleted: they lived two hours at
 * most, and their clients ask for a new key (401 until then).
 */
export class AiSessionKeyLoginSession1763939400000 implements MigrationInterface {
  name = 'AiSessionKeyLoginSession1763939400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM ai_session_keys`);
    await q.query(`ALTER TABLE ai_session_keys ADD COLUMN login_session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE`);
    // The cascade looks keys up by their session on every session delete.
    await q.query(`CREATE INDEX ai_session_keys_login_session_idx ON ai_session_keys (login_session_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ai_session_keys DROP COLUMN login_session_id`);
  }
}
