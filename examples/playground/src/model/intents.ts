import { CATALOG, formatCents } from '../shop/shop-store.ts';
import type { ScriptedTurn } from './chat-chunks.ts';
import type { RequestValues } from './request-reading.ts';
import { didNotGoThrough, whyNot } from './reply-reading.ts';
import type { ConversationView, ToolReply } from './scenarios.ts';

/** What the scripted model understands of a message that is not a scenario's prompt. */
export interface Intent {
  readonly id: string;
  readonly pattern: RegExp;
  /** Writes the turn, with the values the visitor typed. */
  readonly script: (view: ConversationView, values: RequestValues) => ScriptedTurn;
}

const call = (view: ConversationView, index: number, name: string, args: unknown) => ({
  id: view.callId(index),
  name,
  arguments: JSON.stringify(args),
});

function readJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** An amount the way it was typed: dollars as money, anything a shop cannot pay as the number itself. */
const asTyped = (cents: number, currency: string | undefined) =>
  currency !== undefined
    ? `${cents / 100} ${currency}`
    : Number.isInteger(cents) && Number.isSafeInteger(cents)
      ? formatCents(cents)
      : `${cents} cents`;
const money = (cents: unknown) => (typeof cents === 'number' ? formatCents(cents) : 'the amount');
const outcome = (
  reply: ToolReply | undefined,
  success: (output: Record<string, unknown>) => string,
  otherwise = (failed: ToolReply) => didNotGoThrough('request', failed),
): ScriptedTurn => ({
  content:
    reply === undefined
      ? 'I did not get an answer from the tool, so nothing was done.'
      : reply.code === undefined
        ? success(readJson(reply.content))
        : otherwise(reply),
});

/**
 * The requests the offline model answers with the values typed: the amount, the address, the
 * products and quantities, the postcode, the order id or the coupon code. When a value it needs
 * is missing it asks for it instead of making one up.
 */
export const INTENTS: readonly Intent[] = [
  {
    id: 'transfer',
    pattern: /\b(send|transfer|wire)\b/i,
    script: (view, { amountCents, currency, email }) => {
      if (view.step > 0) {
        return outcome(
          view.replies[0],
          (sent) =>
            `Sent ${money(sent['amount_cents'])} to ${String(sent['to'])} (${String(sent['transfer_id'])}).`,
          (reply) =>
            reply.code === 'approval_denied'
              ? 'Understood, I did not send the money.'
              : didNotGoThrough('transfer', reply, 'Check the wallet before you try again.'),
        );
      }
      if (amountCents === undefined || email === undefined) {
        return {
          content: `To send money I need ${amountCents === undefined && email === undefined ? 'an amount and an email address' : amountCents === undefined ? 'an amount' : 'an email address'}, for example "send $20 to alice@example.com".`,
        };
      }
      return {
        content: `Preparing a transfer of ${asTyped(amountCents, currency)} to ${email}. You need to approve it.`,
        // The values go as typed, in the unit typed: what the shop refuses is the gate's to say.
        calls: [
          call(
            view,
            0,
            'transfer_funds',
            currency === undefined
              ? { to: email, amount_cents: amountCents }
              : { to: email, amount_cents: amountCents, currency },
          ),
        ],
      };
    },
  },
  {
    id: 'show',
    pattern: /\b(show|see|look at|display)\b/i,
    script: (view, { items }) => {
      if (view.step > 0)
        return outcome(
          view.replies[0],
          (shown) => `Here it is: the ${String(shown['name'])}, ${String(shown['price'])}.`,
        );
      const first = items[0];
      if (first === undefined)
        return {
          content: `Which product? The shop has ${Object.values(CATALOG)
            .map((item) => item.name)
            .join(', ')}.`,
        };
      return {
        content: `Showing you the ${CATALOG[first.sku].name}.`,
        calls: [call(view, 0, 'show_product', { sku: first.sku })],
      };
    },
  },
  {
    id: 'add',
    pattern: /\b(add|put|want|buy (?:a|an|\d|one|two|three|four|five))\b/i,
    script: (view, { items }) => {
      if (view.step > 0) {
        const added = view.replies
          .filter((reply) => reply.code === undefined)
          .map(
            (reply) =>
              `${String(readJson(reply.content)['quantity'])} × ${String(readJson(reply.content)['name'])}`,
          );
        const refused = view.replies.filter((reply) => reply.code !== undefined);
        return {
          content: `${added.length > 0 ? `Added ${added.join(' and ')}.` : 'Nothing was added.'}${refused.map((reply) => ` Refused: ${whyNot(reply)}`).join('')}`,
        };
      }
      if (items.length === 0)
        return {
          content: `What should I add? The shop has ${Object.values(CATALOG)
            .map((item) => item.name)
            .join(', ')}.`,
        };
      return {
        content: `Adding ${items.map((item) => `${item.quantity} × ${CATALOG[item.sku].name}`).join(' and ')}.`,
        calls: items.map((item, index) =>
          call(view, index, 'add_to_cart', { sku: item.sku, quantity: item.quantity }),
        ),
      };
    },
  },
  {
    id: 'coupon',
    pattern: /\b(coupon|discount|code)\b/i,
    script: (view, { coupon }) => {
      if (view.step > 0)
        return outcome(
          view.replies[0],
          (applied) =>
            `${String(applied['code'])} is applied: ${String(applied['percent_off'])}% off your next checkout.`,
          (reply) => `The shop declined the coupon: ${whyNot(reply)}`,
        );
      if (coupon === undefined)
        return { content: 'Which coupon code? Write it in capitals, for example TRAIL10.' };
      return { content: `Applying ${coupon}.`, calls: [call(view, 0, 'apply_coupon', { code: coupon })] };
    },
  },
  {
    id: 'delivery',
    pattern: /\b(deliver|delivery|courier|slot)/i,
    script: (view, { postcode }) => {
      if (view.step > 0) {
        return outcome(
          view.replies[0],
          (found) => `The earliest slot is ${String(found['slot'])}.`,
          (reply) =>
            reply.code === 'user_cancelled'
              ? 'Stopped the delivery search as you asked. Nothing was booked.'
              : `The search did not finish: ${whyNot(reply)}`,
        );
      }
      if (postcode === undefined)
        return { content: 'To which postcode? A five-digit ZIP code, for example 94110.' };
      return {
        content: 'Searching every courier, this can take a while.',
        calls: [call(view, 0, 'find_delivery_slot', { postcode })],
      };
    },
  },
  {
    id: 'track',
    pattern: /\b(where|track)\b/i,
    script: (view, { orderId }) => {
      if (view.step > 0)
        return outcome(
          view.replies[0],
          (found) => `Your order is at ${String(found['location'])}.`,
          () =>
            `The carrier's tracking service is failing right now, so I can't say where ${orderId ?? 'it'} is. Nothing was changed; try again later.`,
        );
      if (orderId === undefined) return { content: 'Which order? Give me its id, for example ord_1000.' };
      return { content: 'Asking the carrier.', calls: [call(view, 0, 'track_order', { order_id: orderId })] };
    },
  },
  {
    id: 'checkout',
    pattern: /\b(buy|check ?out|pay)\b/i,
    script: (view, { amountCents, currency }) => {
      if (view.step > 0) {
        return outcome(
          view.replies[0],
          (receipt) =>
            `Done: order ${String(receipt['order_id'])} is paid, ${money(receipt['amount_cents'])} from your wallet.`,
          (reply) => didNotGoThrough('checkout', reply, 'Check your orders before you try again.'),
        );
      }
      const amount = amountCents ?? view.cartTotalCents;
      if (amount === undefined || (amountCents === undefined && amount === 0))
        return { content: 'Your cart is empty, so there is nothing to pay for.' };
      return {
        content: `Checking out ${asTyped(amount, currency)}.`,
        calls: [call(view, 0, 'checkout', { amount_cents: amount, currency: currency ?? 'USD' })],
      };
    },
  },
];
