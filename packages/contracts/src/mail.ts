/** Mail project as printed by the CLI (`project:create`, `project:rotate-keys`). */
export interface MailProjectCredentials {
  id: string;
  name: string;
  secretKey: string;
  publicKey: string;
}

export const MAIL_SECRET_KEY_PREFIX = 'sk_';
export const MAIL_PUBLIC_KEY_PREFIX = 'pk_';
