// `.data/dev-credentials.json`: the local platform admin and mail project keys `npm start` bootstraps
// when the developer did not set their own (decisions.md "platform bootstrap" / "mail bootstrap").
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SECRET_KEY = /^sk_[0-9a-f]{48}$/;
const PUBLIC_KEY = /^pk_[0-9a-f]{48}$/;

function generate() {
  return {
    platformAdmin: { email: 'admin@example.com', password: randomBytes(18).toString('base64url') },
    mail: { secretKey: `sk_${randomBytes(24).toString('hex')}`, publicKey: `pk_${randomBytes(24).toString('hex')}` },
  };
}

function isValid(c) {
  return (
    typeof c?.platformAdmin?.email === 'string' &&
    typeof c.platformAdmin.password === 'string' &&
    c.platformAdmin.password.length >= 8 &&
    SECRET_KEY.test(c.mail?.secretKey) &&
    PUBLIC_KEY.test(c.mail?.publicKey)
  );
}

/** Reads the file, or creates it (mode 0600) on first use. Returns { credentials, created }. */
export function loadOrCreateDevCredentials(file) {
  if (existsSync(file)) {
    let credentials;
    try {
      credentials = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      credentials = null;
    }
    if (!isValid(credentials)) {
      throw new Error(`${file} is not valid; delete it and run again to generate new dev credentials`);
    }
    chmodSync(file, 0o600);
    return { credentials, created: false };
  }
  const credentials = generate();
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { credentials, created: true };
}
