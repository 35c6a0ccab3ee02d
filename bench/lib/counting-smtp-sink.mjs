// The SMTP sink the mail benches send to: accepts every message, parses nothing, records one entry
// per message (what `entryOf` makes of its receive time and first recipient) and counts them all.
import { SMTPServer } from 'smtp-server';

/** The default entry: receive time, recipient and the recipient's domain. */
const timeAndRecipient = (at, to) => ({ at, to, domain: to.slice(to.indexOf('@') + 1) });

/**
 * Starts the sink on a free local port. `received` holds the entries (a bench may empty it between
 * phases); `total` counts every message since the start and is never reset.
 */
export async function startCountingSink(entryOf = timeAndRecipient) {
  const received = [];
  let total = 0;
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 1000,
    maxClients: 1000,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received.push(entryOf(Date.now(), session.envelope.rcptTo[0]?.address ?? ''));
        total += 1;
        callback(null, 'OK');
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    received,
    /** Messages received since the start (never reset, unlike `received`). */
    get total() {
      return total;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}
