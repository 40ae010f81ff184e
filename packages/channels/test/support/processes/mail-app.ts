// An app server whose approvers are reached by mail, for a browser to follow the link in one: an
// SMTP server (smtp-server) on 127.0.0.1 takes the gate's mail; the rest is the server's wire app
// (links under /api/toolgate, a wire that needs manager_1), over a SQLite file (argv[2]).
// POST /test/calls/:id answers the mail manager_1 received about the call ({ to, subject, text, html }).
import { runWireApp } from '../../../../server/test/support/processes/wire-app.ts';
import { emailChannel } from '../../../src/email/index.ts';
import { smtpServer } from '../smtp.ts';

const [path = ''] = process.argv.slice(2);
const smtp = await smtpServer();
const mail = emailChannel({
  transport: smtp.url,
  from: 'Approvals <approvals@app.example>',
  addressOf: (principal) => `${principal}@corp.example`,
});
await runWireApp({
  path,
  channels: [mail],
  answer: async (_gate, call) => {
    // The gate mails as soon as the call waits; the SMTP server says when a mail arrived.
    for (;;) {
      const received = smtp.received.find(({ mail: got }) => got.subject?.includes(`(call ${call.id})`));
      if (received !== undefined) {
        const { to, mail: got } = received;
        return Response.json({ to, subject: got.subject, text: got.text, html: got.html });
      }
      await smtp.state.reached.promise;
    }
  },
  close: () => smtp.close(),
});
