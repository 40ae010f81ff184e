// What the examples' one-process servers share: the port, the body limit and the shutdown.
//
// - The port is taken first, before anything slow starts or any ledger is opened: a taken port
//   is one clear line and exit code 1, not a stack trace (and not a second process on the
//   ledger another one is running).
// - Every request is held to a body limit before any route sees it: a body declared larger is
//   refused with 413, one of unknown length with 411, each as `{ error: { code, message } }`;
//   what the client still sends is dropped as it arrives, and the connection closed soon after.
//   Nothing keeps such a body.
// - SIGINT and SIGTERM end the process within `graceMs` whatever is open: page loads, event
//   streams and the dev server's hot-reload socket are destroyed, not waited for. A second signal
//   ends it at once.
import { createServer } from 'node:http';

/** How long a shutdown may take before the process exits anyway. */
const GRACE_MS = 1000;

/**
 * Listens on `host:port` (0 picks a free port) and returns the server; requests wait until
 * {@link LocalServer.serve} hands it the app.
 *
 * @param {{ name: string, host: string, port: number, bodyLimitBytes: number }} options
 * @returns {Promise<LocalServer>}
 *
 * @typedef {object} LocalServer
 * @property {import('node:http').Server} http
 * @property {number} port The port it listens on.
 * @property {(handler: (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => void) => void} serve
 * @property {(close: () => Promise<void>) => void} stopOnSignals Runs `close` (the app's own shutdown) on SIGINT or SIGTERM, then exits.
 *
 * @example
 * const local = await listenLocally({ name: 'toolgate playground', host: '127.0.0.1', port: 5173, bodyLimitBytes: 1 << 20 });
 * local.serve((request, response) => app(request, response));
 * local.stopOnSignals(() => app.close());
 */
export async function listenLocally({ name, host, port, bodyLimitBytes }) {
  const http = createServer();
  const sockets = new Set();
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  // Requests that arrive while the app starts wait for it: an answer such as 503 would end a
  // page's EventSource for good, where a wait lets it carry on (after a restart, say).
  let started;
  const ready = new Promise((resolve) => (started = resolve));
  let handler = (request, response) => void ready.then(() => handler(request, response));
  const answer = (request, response) => {
    if (!withinLimit(request, response, bodyLimitBytes)) return;
    handler(request, response);
  };
  http.on('request', answer);
  // A client that asks before it sends a large body is told no before it sends it.
  http.on('checkContinue', (request, response) => {
    if (!withinLimit(request, response, bodyLimitBytes)) return;
    response.writeContinue();
    handler(request, response);
  });

  await new Promise((resolve) => {
    const failed = (error) => {
      const where = `${host}:${port}`;
      console.error(
        error.code === 'EADDRINUSE'
          ? `${name}: port ${port} on ${host} is taken (is it already running?); stop what listens there, or start with PORT=<another port>.`
          : error.code === 'EACCES'
            ? `${name}: may not listen on ${where}; start with PORT=<a port above 1023>.`
            : `${name}: could not listen on ${where}: ${error.message}`,
      );
      process.exit(1);
    };
    http.once('error', failed);
    http.listen(port, host, () => {
      http.off('error', failed);
      resolve();
    });
  });

  let stopping = false;
  return {
    http,
    port: http.address().port,
    serve(next) {
      handler = next;
      started();
    },
    stopOnSignals(close) {
      const stop = async (signal) => {
        if (stopping) process.exit(1);
        stopping = true;
        // One line says how long the shutdown took, from the signal to the exit, by this
        // process's own clock (what a busy machine adds before the signal arrives is not in it).
        const began = performance.now();
        process.once('exit', () =>
          console.error(`${name}: stopped on ${signal} in ${Math.round(performance.now() - began)} ms`),
        );
        // Whatever still holds on when the grace is up, the process ends anyway.
        setTimeout(() => process.exit(0), GRACE_MS).unref();
        http.close();
        http.closeAllConnections();
        // Upgraded sockets (the dev server's hot reload) and open streams are not waited for.
        for (const socket of sockets) socket.destroy();
        try {
          await close();
        } catch (error) {
          console.error(`${name}: while stopping: ${error instanceof Error ? error.message : String(error)}`);
        }
        process.exit(0);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
  };
}

/** Refuses a body declared larger than the limit (413), or of unknown length (411), before anything reads it. */
function withinLimit(request, response, limit) {
  const declared = request.headers['content-length'];
  if (declared !== undefined) {
    if (Number(declared) <= limit) return true;
    refuse(response, 413, 'too_large', `the body may be at most ${limit} bytes`);
    return false;
  }
  // No length and no transfer coding: no body (a GET, say).
  if (request.headers['transfer-encoding'] === undefined) return true;
  refuse(response, 411, 'length_required', 'send the body with a Content-Length');
  return false;
}

/** How long a refused request's connection stays open, discarding what still arrives, so that the client reads the answer. */
const LINGER_MS = 1000;

function refuse(response, status, code, message, headers = {}) {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify({ error: { code, message } }));
  // Nothing keeps the body: what the client still sends is discarded as it arrives (closing at
  // once would reset the connection before the client has read the answer), and after a moment the
  // connection is closed, however much is still coming.
  const { socket } = response;
  response.once('finish', () => setTimeout(() => socket?.destroy(), LINGER_MS).unref());
}
