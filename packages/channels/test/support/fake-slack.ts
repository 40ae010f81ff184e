import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Web API call the fake received, its form fields read (blocks parsed from their JSON). */
export interface SlackCall {
  readonly method: string;
  readonly token: string | undefined;
  readonly channel: string;
  readonly ts?: string;
  readonly text: string;
  readonly blocks: readonly Record<string, unknown>[];
}

/**
 * A loopback stand-in for Slack: the Web API's chat.postMessage and chat.update (what the real
 * `@slack/web-api` client sends, form-encoded, answered as Slack answers) and the response_url of
 * clicks. It records every call; `failWith` makes the next calls answer Slack's `{ ok: false }`.
 */
export async function fakeSlack() {
  const calls: SlackCall[] = [];
  const responses: { readonly id: string; readonly body: Record<string, unknown> }[] = [];
  const failures: string[] = [];
  let ts = 1_700_000_000;
  const server = createServer((request, response) => {
    void read(request).then((raw) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const answer = (body: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (url.pathname.startsWith('/respond/')) {
        responses.push({
          id: url.pathname.slice('/respond/'.length),
          body: JSON.parse(raw) as Record<string, unknown>,
        });
        return answer({ ok: true });
      }
      const method = url.pathname.replace(/^\/api\//u, '');
      const form = new URLSearchParams(raw);
      const failure = failures.shift();
      if (failure !== undefined) return answer({ ok: false, error: failure });
      const call: SlackCall = {
        method,
        token: request.headers.authorization?.replace(/^Bearer /u, ''),
        channel: form.get('channel') ?? '',
        ...(form.get('ts') === null ? {} : { ts: form.get('ts') ?? '' }),
        text: form.get('text') ?? '',
        blocks: JSON.parse(form.get('blocks') ?? '[]') as Record<string, unknown>[],
      };
      calls.push(call);
      if (method === 'chat.postMessage') {
        ts += 1;
        // Slack answers a message to a user id with the id of the direct message channel.
        return answer({ ok: true, channel: `D${call.channel.slice(1)}`, ts: `${ts}.000100` });
      }
      if (method === 'chat.update') return answer({ ok: true, channel: call.channel, ts: call.ts });
      return answer({ ok: false, error: 'unknown_method' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    apiUrl: `${base}/api/`,
    calls,
    responses,
    /** The response_url of a click: what the handler tells the person arrives here. */
    responseUrl: (id: string) => `${base}/respond/${id}`,
    failWith: (...errors: string[]) => failures.push(...errors),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type FakeSlack = Awaited<ReturnType<typeof fakeSlack>>;

function read(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The value of a card's button (`toolgate_approve`, `toolgate_deny`), or undefined when it has none. */
export function buttonOf(
  blocks: readonly Record<string, unknown>[],
  actionId: string,
): Record<string, unknown> | undefined {
  for (const block of blocks) {
    if (block['type'] !== 'actions') continue;
    const found = (block['elements'] as Record<string, unknown>[]).find(
      (element) => element['action_id'] === actionId,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * An interactivity request as Slack sends one for a click on a card's button: the `block_actions`
 * payload form-encoded, signed `v0` with the signing secret at `timestamp` (seconds).
 */
export function clickRequest(
  secret: string,
  click: { user: string; actionId: string; value: string; responseUrl: string; actionTs?: string },
  timestamp = Math.floor(Date.now() / 1000),
): Request {
  const payload = {
    type: 'block_actions',
    user: { id: click.user, username: click.user.toLowerCase(), team_id: 'T0001' },
    api_app_id: 'A0001',
    team: { id: 'T0001', domain: 'example' },
    container: { type: 'message', message_ts: '1700000001.000100', channel_id: 'D0001' },
    trigger_id: '123.456.abc',
    response_url: click.responseUrl,
    actions: [
      {
        type: 'button',
        block_id: 'toolgate_vote',
        action_id: click.actionId,
        value: click.value,
        action_ts: click.actionTs ?? `${timestamp}.${Math.floor(Math.random() * 1e6)}`,
      },
    ],
  };
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return signedRequest(secret, body, timestamp);
}

/** A POST to the interactivity URL with `body`, signed as Slack signs it. */
export function signedRequest(secret: string, body: string, timestamp: number): Request {
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return new Request('https://app.example/slack/interactivity', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
    },
    body,
  });
}
