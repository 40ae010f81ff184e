import type { AuditEvent, SettledCall } from '@toolgate/core';
import type { CardCharge } from '../shop/card-payment.ts';
import type { ShopState } from '../shop/shop-store.ts';
import type { ChatMode, ChatView, Pace } from './transcript.ts';

/** What the page loads for its conversation: the chat, the shop as the server keeps it, and the audit trail so far. */
export interface ChatLoad {
  readonly chat: ChatView;
  readonly shop: ShopState;
  readonly audit: readonly AuditEvent[];
}

/** The visitor's own model as the server holds it: never the key, only whether there is one. */
export type ModelSettings =
  | { readonly configured: false }
  | {
      readonly configured: true;
      readonly baseURL: string;
      readonly model: string;
      readonly hasKey: boolean;
      readonly label: string;
    };

/** Where the server mounted `toolgateHandler`. */
export const TOOLGATE_URL = '/api/toolgate';

/** The playground's server said no: its message, and its code (`busy`, `left`…) when it gave one. */
export class ApiRefusal extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ApiRefusal';
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/api${path}`, {
    method,
    credentials: 'same-origin',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text === '' ? {} : JSON.parse(text);
  if (!response.ok) {
    const error = (parsed as { error?: { message?: unknown; code?: unknown } }).error;
    throw new ApiRefusal(
      typeof error?.message === 'string' ? error.message : `the server answered ${response.status}`,
      typeof error?.code === 'string' ? error.code : undefined,
    );
  }
  return parsed as T;
}

/** The page's API client. The browser's cookie (httpOnly) says who is asking; the page never sees it. */
export const api = {
  /** Gives this browser its session cookie when it has none. */
  visit: () => call<{ ok: true }>('POST', '/visit'),
  current: (pace: Pace) => call<ChatLoad>('GET', `/chat?pace=${pace}`),
  start: (pace: Pace, mode: ChatMode) => call<ChatLoad>('POST', '/chat', { pace, mode }),
  send: (chat: string, text: string) =>
    call<{ ok: true }>('POST', `/chat/${encodeURIComponent(chat)}/messages`, { text }),
  stop: (chat: string) => call<{ ok: true }>('POST', `/chat/${encodeURIComponent(chat)}/stop`, {}),
  /** What the page's own gate settled for a call the server handed to it; the server answers the model with it. */
  toolResult: (chat: string, record: SettledCall) =>
    call<{ ok: true }>('POST', `/chat/${encodeURIComponent(chat)}/tool-results`, {
      id: record.id,
      record: {
        status: record.status,
        input: record.input,
        output: record.output,
        reason: record.reason,
        history: record.history.map(({ status, at }) => ({ status, at })),
      },
    }),
  shop: (chat: string) => call<{ shop: ShopState }>('GET', `/chat/${encodeURIComponent(chat)}/shop`),
  /** The conversation's card charges, as the payment provider's dashboard shows them. */
  payments: (chat: string) =>
    call<{ charges: readonly CardCharge[] }>('GET', `/chat/${encodeURIComponent(chat)}/payments`),
  model: () => call<ModelSettings>('GET', '/model'),
  /** Sends the visitor's model settings once; the server keeps the key in its memory and never sends it back. */
  setModel: (settings: { readonly baseURL: string; readonly model: string; readonly apiKey: string }) =>
    call<ModelSettings>('PUT', '/model', settings),
};

/** The chat's event stream: the URL the page's `EventSource` opens. */
export const chatEventsUrl = (chat: string) => `/api/chat/${encodeURIComponent(chat)}/events`;
