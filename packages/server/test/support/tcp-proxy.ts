// A TCP proxy on 127.0.0.1 in front of a real server, for outages: it passes bytes through,
// refuses connections (nothing listens), blackholes them (accepts, then never answers), or cuts
// every connection it carries.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'pass' | 'refuse' | 'blackhole';

export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  readonly through: (url: string) => string;
  readonly mode: (mode: ProxyMode) => Promise<void>;
  /** Ends every connection carried now, at once (as a network that broke does). */
  readonly cut: () => void;
  readonly close: () => Promise<void>;
}

export async function tcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server?: Socket }>();
  let current: ProxyMode = 'pass';
  let port = 0;
  let server: Server | undefined;

  const accept = (client: Socket) => {
    const pair: { client: Socket; server?: Socket } = { client };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pairs.delete(pair);
      pair.server?.destroy();
    });
    if (current === 'blackhole') return; // accepted, never answered
    const far = connect(upstream);
    pair.server = far;
    far.on('error', () => client.destroy());
    far.on('close', () => client.destroy());
    client.pipe(far);
    far.pipe(client);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(accept);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        port = (next.address() as AddressInfo).port;
        server = next;
        resolve();
      });
    });
  const unlisten = () =>
    new Promise<void>((resolve) => {
      const open = server;
      server = undefined;
      if (open === undefined) return resolve();
      open.close(() => resolve());
    });

  await listen();
  const cut = () => {
    for (const pair of [...pairs]) {
      pair.client.destroy();
      pair.server?.destroy();
    }
  };
  return {
    port,
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async mode(mode) {
      current = mode;
      if (mode === 'blackhole') {
        // Connections carried now go silent too: nothing they send arrives, nothing comes back.
        for (const pair of pairs) {
          pair.client.unpipe();
          pair.server?.unpipe();
        }
      }
      if (mode === 'refuse') {
        cut();
        await unlisten();
      } else if (server === undefined) await listen();
    },
    cut,
    async close() {
      cut();
      await unlisten();
    },
  };
}
