import { createHash } from 'node:crypto';
import type { ToolCallRecord } from '@toolgate/core';

/**
 * What a notice tells its principal: they are asked (`asked`), still asked (`reminder`), asked
 * now that nobody decided in time (`escalated`), or how the call they were asked about ended
 * (`decided`, `expired`).
 *
 * @example
 * const kind: NoticeKind = 'reminder';
 */
export type NoticeKind = 'asked' | 'reminder' | 'escalated' | 'decided' | 'expired';

/**
 * One notice to one principal about one call, as a channel receives it. `id` is stable: a
 * delivery tried again carries the same id, so a channel (or what it calls) can drop a repeat.
 * `link` is the confirm page for `to`, when the gate has `links` and the notice asks them.
 *
 * @example
 * const notice: Notice = { id: 'ntc_3f…', kind: 'asked', to: 'manager_1', call, from: { principal: 'agent_7', onBehalfOf: 'alice' } };
 */
export interface Notice {
  readonly id: string;
  readonly kind: NoticeKind;
  readonly to: string;
  readonly call: ToolCallRecord;
  readonly from: { readonly principal: string; readonly onBehalfOf?: string };
  readonly link?: string;
}

/**
 * Where notices go: a webhook, a chat, mail. `deliver` resolves once the channel has taken the
 * notice (with a `ref` to what it showed, when it can update it later), and rejects, or does not
 * resolve before `ctx.signal` aborts, when it has not: the notice is then delivered again later,
 * with the same `id`. `update`, when given, is used for a call's `decided` or `expired` notice to
 * a principal earlier notices of it reached with a `ref`: once for each such `ref`, so every card
 * shows the end, whichever app server posted it.
 *
 * @example
 * const log: Channel = {
 *   name: 'log',
 *   async deliver(notice, { signal }) {
 *     await fetch('https://hooks.example/toolgate', { method: 'POST', body: JSON.stringify(notice), signal });
 *   },
 * };
 */
export interface Channel {
  readonly name: string;
  deliver(notice: Notice, ctx: { readonly signal: AbortSignal }): Promise<{ ref?: string } | void>;
  update?(notice: Notice, ref: string, ctx: { readonly signal: AbortSignal }): Promise<void>;
}

/** The order notices written at one moment go out in: the ask before its end. */
export const RANK: Readonly<Record<NoticeKind, number>> = {
  asked: 0,
  reminder: 1,
  escalated: 2,
  decided: 3,
  expired: 3,
};

/**
 * A notice's stable id, from what it is: the call, its kind, which escalation step (0 otherwise),
 * whom it is for and, for an `asked` an approver's edit sends, the hash of the edited input (each
 * edit asks again, with a notice of its own).
 *
 * @example
 * noticeId('w1', 'asked', 0, 'manager_1'); // 'ntc_…' (the same every time)
 */
export function noticeId(
  callId: string,
  kind: NoticeKind,
  step: number,
  to: string,
  editedHash?: string,
): string {
  const what = editedHash === undefined ? [callId, kind, step, to] : [callId, kind, step, to, editedHash];
  const digest = createHash('sha256').update(JSON.stringify(what)).digest('hex');
  return `ntc_${digest.slice(0, 32)}`;
}

/**
 * Checks the gate's channels when it is created: a list of objects, each with a `name` of its own
 * and a `deliver` function.
 *
 * @example
 * const channels = checkChannels(options.channels);
 */
export function checkChannels(channels: unknown): readonly Channel[] {
  if (channels === undefined) return [];
  if (!Array.isArray(channels))
    throw new TypeError(
      'createServerGate: `channels` must be a list of channels, e.g. [webhookChannel({ url, secret })].',
    );
  const names = new Set<string>();
  for (const channel of channels as unknown[]) {
    const { name, deliver, update } = (channel ?? {}) as Partial<Channel>;
    if (typeof name !== 'string' || name === '' || typeof deliver !== 'function')
      throw new TypeError(
        'createServerGate: each channel needs a `name` and a `deliver(notice, { signal })` function.',
      );
    if (update !== undefined && typeof update !== 'function')
      throw new TypeError(`createServerGate: channel "${name}": \`update\` must be a function when given.`);
    if (names.has(name))
      throw new TypeError(
        `createServerGate: two channels are named "${name}"; each needs a name of its own.`,
      );
    names.add(name);
  }
  return channels as readonly Channel[];
}
