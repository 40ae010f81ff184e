import type { Channel, Notice } from '@toolgate/server';
import { Webhook } from 'standardwebhooks';

/**
 * What {@link webhookChannel} takes: where to POST, and the Standard Webhooks secret both ends
 * share (`whsec_` and base64, as the receiver's library takes it).
 *
 * @example
 * const options: WebhookChannelOptions = { url: 'https://relay.example/toolgate', secret: process.env.TOOLGATE_WEBHOOK_SECRET! };
 */
export interface WebhookChannelOptions {
  readonly url: string | URL;
  readonly secret: string;
  /** The channel's name in the gate and the audit trail (default `webhook`); give each webhook of a gate its own. */
  readonly name?: string;
  /** The `fetch` to send with (default: the global one). */
  readonly fetch?: typeof fetch;
}

/**
 * What the receiver is sent: the notice, under a `type` that names its kind, with the time it was
 * sent. `ref` is set on the update of a notice the receiver gave a `ref` for.
 *
 * @example
 * const event = JSON.parse(body) as WebhookPayload;
 * if (event.type === 'toolgate.notice.asked') await post(event.data.to, event.data.link);
 */
export interface WebhookPayload {
  readonly type: `toolgate.notice.${Notice['kind']}`;
  readonly timestamp: string;
  readonly data: Notice;
  readonly ref?: string;
}

/**
 * A channel that POSTs each notice as JSON to one URL, signed with Standard Webhooks: the
 * `webhook-id` header is the notice's id (the same on every retry, so a receiver drops a repeat),
 * `webhook-timestamp` the time of this attempt, `webhook-signature` the HMAC-SHA256 of both and the
 * body. An answer other than 2xx (a redirect too) is a failure the gate tries again later; a 2xx
 * whose JSON body has a string `ref` tells the gate what to update when the call ends: it then
 * sends that notice with `ref` set.
 *
 * @example
 * import { createServerGate } from '@toolgate/server';
 * import { webhookChannel } from '@toolgate/channels/webhook';
 *
 * const gate = createServerGate({
 *   tools, ledger,
 *   channels: [webhookChannel({ url: 'https://relay.example/toolgate', secret: process.env.TOOLGATE_WEBHOOK_SECRET! })],
 * });
 */
export function webhookChannel(options: WebhookChannelOptions): Channel {
  const url = new URL(options.url);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new TypeError(`webhookChannel: \`url\` must be an http(s) URL (got ${url.protocol}).`);
  // Throws at once on a secret that is not base64 (with or without its whsec_ prefix).
  const signer = new Webhook(options.secret);
  const send = options.fetch ?? fetch;

  const post = async (notice: Notice, ref: string | undefined, signal: AbortSignal) => {
    const id = ref === undefined ? notice.id : await updateId(notice.id, ref);
    const now = new Date();
    const payload: WebhookPayload = {
      type: `toolgate.notice.${notice.kind}`,
      timestamp: now.toISOString(),
      data: notice,
      ...(ref === undefined ? {} : { ref }),
    };
    const body = JSON.stringify(payload);
    const response = await send(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signer.sign(id, now, body),
      },
      body,
      redirect: 'manual',
      signal,
    });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      throw new Error(`the webhook at ${url.origin} answered ${response.status}`);
    }
    return refIn(await response.text());
  };

  return {
    name: options.name ?? 'webhook',
    async deliver(notice, { signal }) {
      const ref = await post(notice, undefined, signal);
      return ref === undefined ? undefined : { ref };
    },
    async update(notice, ref, { signal }) {
      await post(notice, ref, signal);
    },
  };
}

/** The receiver's `ref`, when its answer is JSON holding one; nothing otherwise (an empty 2xx is a plain yes). */
function refIn(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  try {
    const { ref } = JSON.parse(text) as { ref?: unknown };
    return typeof ref === 'string' && ref !== '' ? ref : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The message id of a notice's update of one `ref`: the end of a call updates every message the
 * receiver showed it in (the first ask, a reminder), each its own message, so a receiver that
 * drops a repeated webhook-id must not drop the second. Stable across retries of the same update.
 */
async function updateId(noticeId: string, ref: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(ref)));
  const hex = Array.from(digest.subarray(0, 8), (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${noticeId}.${hex}`;
}
