// An app server with approval links, for a browser to open them (see wire-app.ts), over a SQLite
// file (argv[2]): POST /test/calls/:id answers { link }, the link for manager_1.
import { runWireApp } from './wire-app.ts';

const [path = ''] = process.argv.slice(2);
await runWireApp({
  path,
  answer: (gate, call) => Response.json({ link: gate.linkFor(call, 'manager_1') }),
});
