/**
 * The Node versions the services run on: Node 24 LTS from 24.11 (`engines` in the root package.json).
 * An older Node does not fail cleanly: on Node 20 the platform's native argon2 binding ends the
 * process with SIGSEGV while it loads, before any line is logged.
 */
const MINIMUM = { major: 24, minor: 11 };

/** Why `version` (`process.versions.node`, e.g. `20.20.2`) cannot run the services, or undefined if it can. */
export function unsupportedNodeMessage(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > MINIMUM.major || (major === MINIMUM.major && minor >= MINIMUM.minor)) return undefined;
  return (
    `Node ${version} cannot run this service: it needs Node >= ${MINIMUM.major}.${MINIMUM.minor}. ` +
    'After `npm install`, the npm scripts run the Node 24 the project installs ' +
    '(`npm start -w platform-api`, `npm run start:worker -w mail-api`, `npx node <file>`).'
  );
}
