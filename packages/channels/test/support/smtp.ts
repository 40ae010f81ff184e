import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { deferred } from '@toolgate/test-utils';

/** What a real SMTP server on loopback does with the next messages: take them, refuse them (550), or never answer their data. */
export type SmtpMode = 'accept' | 'refuse' | 'hang';

/** A received mail, parsed by mailparser, with the envelope's recipients. */
export interface Received {
  readonly to: readonly string[];
  readonly mail: ParsedMail;
}

/**
 * An SMTP server (smtp-server) on 127.0.0.1 with no TLS and no login, recording each mail it
 * takes, parsed with mailparser. `mode` says what it does with the next ones.
 */
export async function smtpServer() {
  const received: Received[] = [];
  const state = { mode: 'accept' as SmtpMode, reached: deferred() };
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    closeTimeout: 100,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (state.mode === 'refuse') {
        const error = Object.assign(new Error(`<${address.address}>: mailbox unavailable`), {
          responseCode: 550,
        });
        return callback(error);
      }
      return callback();
    },
    onData(stream, session, callback) {
      if (state.mode === 'hang') {
        stream.resume();
        state.reached.resolve();
        return; // never answers: the client waits
      }
      void simpleParser(stream).then((mail) => {
        received.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), mail });
        state.reached.resolve();
        state.reached = deferred();
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
