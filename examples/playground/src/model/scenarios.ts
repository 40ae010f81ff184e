import { SKUS } from '../shop/shop-store.ts';
import type { ScriptedCall, ScriptedTurn } from './chat-chunks.ts';
import { budgetWords } from './budget-words.ts';
import { didNotGoThrough, whyNot } from './reply-reading.ts';

/** How the previous turn's calls ended, as the model reads it from the tool messages. */
export interface ToolReply {
  readonly name: string;
  readonly content: string;
  /** The reason code the reply names (`invalid_arguments`, `user_cancelled`, …), or `undefined` for a success. */
  readonly code: string | undefined;
}

/** What a scripted model sees of the conversation when it writes its next turn. */
export interface ConversationView {
  /** Assistant turns already written since the user's message: 0 for the first answer. */
  readonly step: number;
  /** The replies to the previous turn's calls, in call order. */
  readonly replies: readonly ToolReply[];
  /** Makes the id of the `index`th call of this turn, unique within the conversation. */
  readonly callId: (index: number) => string;
  /** The cart's total in cents, as the system message states it, when it does. */
  readonly cartTotalCents?: number | undefined;
}

export type ScenarioId =
  | 'purchase'
  | 'cents-string'
  | 'unknown-tool'
  | 'policy-cancel'
  | 'slow-cancel'
  | 'transfer'
  | 'wire'
  | 'large-transfer'
  | 'budget'
  | 'parallel'
  | 'tool-throws'
  | 'lost-answer'
  | 'held-payment'
  | 'browser-tool'
  | 'guard'
  | 'flood';

export interface Scenario {
  readonly id: ScenarioId;
  readonly title: string;
  /** What the visitor says to start it. */
  readonly prompt: string;
  /** What to watch for, shown beside the scenario. */
  readonly shows: string;
  readonly script: (view: ConversationView) => ScriptedTurn;
}

const call = (view: ConversationView, index: number, name: string, args: unknown): ScriptedCall => ({
  id: view.callId(index),
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

/** A closing answer that reports one call's outcome the way a careful model would. */
function closing(
  reply: ToolReply | undefined,
  success: (content: string) => string,
  otherwise: (reply: ToolReply) => string,
): ScriptedTurn {
  if (reply === undefined) return { content: 'I did not get an answer from the tool, so nothing was done.' };
  return { content: reply.code === undefined ? success(reply.content) : otherwise(reply) };
}

function readJson(text: string): Record<string, unknown> {
  try {
    // A call a person edited before approving, or one settled on evidence, says so first; its output is on the last line.
    const value: unknown = JSON.parse(text.startsWith('{') ? text : (text.split('\n').at(-1) ?? ''));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** What a careful model says first about a call a person edited: that it ran with their values. */
const editedNote = (content: string) =>
  content.startsWith('A person') ? 'You changed the amount before approving, so I used yours. ' : '';

const dollars = (cents: unknown) =>
  typeof cents === 'number' ? `$${(cents / 100).toFixed(2)}` : 'the amount';

/** Amounts a stubborn model keeps sending for $12.50, each wrong in its own way. */
const BAD_AMOUNTS: readonly unknown[] = ['12.50', '$12.50', 12.5, '1250', -1250, null];

export const FLOOD_SIZE = 200;
/** Every tenth call of the flood asks for quantity 0, which the schema refuses. */
export const FLOOD_INVALID_EVERY = 10;

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'purchase',
    title: 'A valid purchase',
    prompt: 'Please check out my cart.',
    shows: 'A well-formed checkout runs, and the wallet and cart change once, in one commit.',
    script: (view) =>
      view.step === 0
        ? {
            content: 'Your cart holds one Enamel camp mug at $12.50. Checking out now.',
            calls: [call(view, 0, 'checkout', { amount_cents: 1250, currency: 'USD' })],
          }
        : closing(
            view.replies[0],
            (content) =>
              `Done: order ${String(readJson(content).order_id)} is paid, ${dollars(readJson(content).amount_cents)} from your wallet.`,
            (reply) => didNotGoThrough('checkout', reply, 'Check your orders before you try again.'),
          ),
  },
  {
    id: 'cents-string',
    title: 'Cents sent as "12.50"',
    prompt: 'Check out my cart, it is $12.50.',
    shows:
      'amount_cents arrives as the string "12.50": rejected before anything runs. The model reads why and corrects itself on the next turn.',
    script: (view) => {
      if (view.step === 0) {
        return {
          content: 'Checking out $12.50.',
          calls: [call(view, 0, 'checkout', '{"amount_cents": "12.50", "currency": "USD"}')],
        };
      }
      const reply = view.replies[0];
      if (view.step === 1 && reply?.code === 'invalid_arguments') {
        return {
          content:
            'The tool wants amount_cents as an integer number of cents, not the string "12.50". Retrying with 1250.',
          calls: [call(view, 0, 'checkout', { amount_cents: 1250, currency: 'USD' })],
        };
      }
      return closing(
        reply,
        (content) =>
          `Done: order ${String(readJson(content).order_id)} is paid, ${dollars(readJson(content).amount_cents)}.`,
        (failed) => didNotGoThrough('checkout', failed, 'Check your orders before you try again.'),
      );
    },
  },
  {
    id: 'unknown-tool',
    title: 'An unknown tool',
    prompt: 'Refund my last order.',
    shows:
      'The model calls refund_order, which this app never registered: rejected as unknown_tool, and the model is told which tools exist.',
    script: (view) =>
      view.step === 0
        ? {
            content: 'Issuing the refund.',
            calls: [call(view, 0, 'refund_order', { order_id: 'ord_1000', reason: 'customer request' })],
          }
        : closing(
            view.replies[0],
            () => 'The refund went through.',
            (reply) => {
              const tools = /the tools are ([^.\n]*)/.exec(reply.content)?.[1];
              return `I can't issue refunds here: this shop has no refund tool${tools ? ` (it has ${tools})` : ''}. Nothing was changed.`;
            },
          ),
  },
  {
    id: 'policy-cancel',
    title: 'Cancelled by app policy',
    prompt: 'Apply the staff coupon STAFF100.',
    shows:
      'The tool runs and declines by returning cancel(reason): the call ends cancelled with tool_cancelled and nothing is committed.',
    script: (view) =>
      view.step === 0
        ? { content: 'Applying STAFF100.', calls: [call(view, 0, 'apply_coupon', { code: 'STAFF100' })] }
        : closing(
            view.replies[0],
            () => 'STAFF100 is applied to your next checkout.',
            (reply) => `The shop declined the coupon: ${whyNot(reply)}`,
          ),
  },
  {
    id: 'slow-cancel',
    title: 'A slow tool you cancel',
    prompt: 'When is the earliest delivery to 94110?',
    shows:
      'The delivery search takes 30 seconds. Cancel it while it runs: its AbortSignal fires, the late result is dropped, nothing is committed.',
    script: (view) =>
      view.step === 0
        ? {
            content: 'Searching every courier, this can take a while.',
            calls: [call(view, 0, 'find_delivery_slot', { postcode: '94110' })],
          }
        : closing(
            view.replies[0],
            (content) => `The earliest slot is ${String(readJson(content).slot)}.`,
            (reply) =>
              reply.code === 'user_cancelled'
                ? 'Stopped the delivery search as you asked. Nothing was booked.'
                : `The search did not finish: ${whyNot(reply)}`,
          ),
  },
  {
    id: 'transfer',
    title: 'A transfer that needs approval',
    prompt: 'Send $25 to sam@example.com for the camping trip.',
    shows:
      'transfer_funds needs a person to approve it. Approve and the wallet changes once; deny and it stays exactly as it was.',
    script: (view) =>
      view.step === 0
        ? {
            content: 'Preparing a transfer of $25.00 to sam@example.com. You need to approve it.',
            calls: [
              call(view, 0, 'transfer_funds', {
                to: 'sam@example.com',
                amount_cents: 2500,
                memo: 'Camping trip',
              }),
            ],
          }
        : closing(
            view.replies[0],
            (content) =>
              `${editedNote(content)}Sent ${dollars(readJson(content).amount_cents)} to ${String(readJson(content).to)} (${String(readJson(content).transfer_id)}).`,
            (reply) =>
              reply.code === 'approval_denied'
                ? 'Understood, I did not send the money.'
                : didNotGoThrough('transfer', reply, 'Check the wallet before you try again.'),
          ),
  },
  {
    id: 'wire',
    title: 'A wire that needs two approvers',
    prompt: 'Wire $40 to landlord@example.com for the rent.',
    shows:
      'wire_funds needs two different people to approve the same amount: approve as yourself, then flip “Approve as the manager” and approve again. Change the amount first and the other approver must approve the new one. Both approvers see the same wire; it runs only after the second approval.',
    script: (view) =>
      view.step === 0
        ? {
            content:
              'Preparing a wire of $40.00 to landlord@example.com. You and a manager both need to approve it.',
            calls: [
              call(view, 0, 'wire_funds', { to: 'landlord@example.com', amount_cents: 4000, memo: 'Rent' }),
            ],
          }
        : closing(
            view.replies[0],
            (content) =>
              `${editedNote(content)}Wired ${dollars(readJson(content).amount_cents)} to ${String(readJson(content).to)} (${String(readJson(content).transfer_id)}).`,
            (reply) =>
              reply.code === 'approval_denied'
                ? 'Understood, I did not wire the money.'
                : didNotGoThrough('wire', reply, 'Check the wallet before you try again.'),
          ),
  },
  {
    id: 'large-transfer',
    title: 'A large transfer your manager approves',
    prompt: 'Send $80 to the roofer, roofer@example.com, for the repair.',
    shows:
      'Over $50.00 a transfer is asked of your manager, not of you: your own Approve is refused (you asked for it). Open Approvals as the manager and approve it there, or open the link in the Outbox. No decision within 20 s sends a reminder; within 40 s finance is asked too; in 5 minutes it expires.',
    script: (view) =>
      view.step === 0
        ? {
            content:
              'Preparing a transfer of $80.00 to roofer@example.com. Over $50.00, your manager has to approve it.',
            calls: [
              call(view, 0, 'large_transfer', {
                to: 'roofer@example.com',
                amount_cents: 8000,
                memo: 'Roof repair',
              }),
            ],
          }
        : closing(
            view.replies[0],
            (content) =>
              `Your manager approved it: sent ${dollars(readJson(content).amount_cents)} to ${String(readJson(content).to)} (${String(readJson(content).transfer_id)}).`,
            (reply) =>
              reply.code === 'approval_denied'
                ? 'Your manager denied the transfer, so I did not send the money.'
                : didNotGoThrough('transfer', reply, 'Check the wallet before you try again.'),
          ),
  },
  {
    id: 'budget',
    title: 'Transfers past the chat’s budget',
    prompt: 'Send $45 to sam@example.com and $30 to alex@example.com.',
    shows:
      'A chat may move $60 in transfers and wires, counted by the server’s ledger. The $45 transfer waits for your approval and already counts, so the $30 one is refused over budget, saying what is used and left. New chat starts a fresh budget.',
    script: (view) => {
      if (view.step === 0) {
        return {
          content:
            'Preparing two transfers: $45.00 to sam@example.com and $30.00 to alex@example.com. You need to approve them.',
          calls: [
            call(view, 0, 'transfer_funds', { to: 'sam@example.com', amount_cents: 4500, memo: 'Tickets' }),
            call(view, 1, 'transfer_funds', { to: 'alex@example.com', amount_cents: 3000, memo: 'Dinner' }),
          ],
        };
      }
      const said = view.replies.map((reply) => {
        const sent = readJson(reply.content);
        if (reply.code === undefined)
          return `${editedNote(reply.content)}Sent ${dollars(sent.amount_cents)} to ${String(sent.to)} (${String(sent.transfer_id)}).`;
        if (reply.code === 'approval_denied') return 'You denied one transfer, so I did not send it.';
        if (reply.code === 'budget_exceeded')
          return `One transfer was refused: ${budgetWords(reply.content) ?? whyNot(reply)}`;
        return didNotGoThrough('transfer', reply, 'Check the wallet before you try again.');
      });
      return { content: said.join(' ') || 'I did not get an answer from the tools, so nothing was done.' };
    },
  },
  {
    id: 'parallel',
    title: 'Three parallel calls, one invalid',
    prompt: 'Add two pairs of socks, a cap and a unicorn plush to my cart.',
    shows:
      'One assistant turn streams three calls by index. The two valid ones commit; the one with a SKU outside the catalog is rejected on its own.',
    script: (view) => {
      if (view.step === 0) {
        return {
          content: 'Adding all three.',
          calls: [
            call(view, 0, 'add_to_cart', { sku: 'socks', quantity: 2 }),
            call(view, 1, 'add_to_cart', { sku: 'cap', quantity: 1 }),
            call(view, 2, 'add_to_cart', { sku: 'unicorn', quantity: 1 }),
          ],
        };
      }
      const added = view.replies
        .filter((reply) => reply.code === undefined)
        .map((reply) => String(readJson(reply.content).name));
      const refused = view.replies.filter((reply) => reply.code !== undefined).length;
      return {
        content: `Added ${added.join(' and ') || 'nothing'}.${refused > 0 ? ` ${refused === 1 ? 'One item was' : `${refused} items were`} refused: there is no unicorn plush in the catalog.` : ''}`,
      };
    },
  },
  {
    id: 'tool-throws',
    title: 'A tool that throws',
    prompt: 'Where is my order ord_1000?',
    shows:
      "The carrier's API fails and the tool throws: the call ends failed with tool_error, and the state is untouched.",
    script: (view) =>
      view.step === 0
        ? { content: 'Asking the carrier.', calls: [call(view, 0, 'track_order', { order_id: 'ord_1000' })] }
        : closing(
            view.replies[0],
            (content) => `Your order is at ${String(readJson(content).location)}.`,
            () =>
              "The carrier's tracking service is failing right now, so I can't say where ord_1000 is. Nothing was changed; try again later.",
          ),
  },
  {
    id: 'lost-answer',
    title: 'A payment whose answer was lost',
    prompt: 'Pay $12.50 with my card on file.',
    shows:
      'The payment provider records the charge, then the connection drops before its answer. The tool threw, yet nobody guesses: reconcile looks the charge up by its idempotency key, finds it, and the call is committed on the provider’s evidence, once (one charge at the provider). Refund undoes it through the tool’s compensate.',
    script: (view) =>
      view.step === 0
        ? {
            content: 'Charging $12.50 to your card on file.',
            calls: [
              call(view, 0, 'pay_by_card', {
                amount_cents: 1250,
                currency: 'USD',
                payment_method: 'pm_card_answer_lost',
              }),
            ],
          }
        : closing(
            view.replies[0],
            (content) =>
              `Paid: charge ${String(readJson(content).charge)} for ${dollars(readJson(content).amount_cents)}.${
                content.startsWith('{')
                  ? ''
                  : ' The provider’s answer was lost on the way back, so the payment was confirmed by looking it up at the provider: it was charged once. I will not charge it again.'
              }`,
            (reply) => didNotGoThrough('card payment', reply, 'Check the provider before you try again.'),
          ),
  },
  {
    id: 'held-payment',
    title: 'A payment nobody can confirm',
    prompt: 'Pay $12.50 with my backup card.',
    shows:
      'The provider records the charge and the answer is lost, and the provider cannot look the charge up either. Nobody can tell, so the call is held for you and never run again by itself; the model waits. Check the charge under “At the payment provider”, then settle it on the card: the output you found, or “It did not happen — run again”.',
    script: (view) => {
      if (view.step === 0) {
        return {
          content: 'Charging $12.50 to your backup card.',
          calls: [
            call(view, 0, 'pay_by_card', {
              amount_cents: 1250,
              currency: 'USD',
              payment_method: 'pm_card_provider_down',
            }),
          ],
        };
      }
      const reply = view.replies[0];
      return closing(
        reply,
        (content) =>
          `Paid: charge ${String(readJson(content).charge)} for ${dollars(readJson(content).amount_cents)}${
            / checked and settled it as done\./.test(content) ? ', as you confirmed at the provider' : ''
          }. I will not charge it again.`,
        (failed) => didNotGoThrough('card payment', failed, 'Check the provider before you try again.'),
      );
    },
  },
  {
    id: 'browser-tool',
    title: 'A tool that runs in your browser',
    prompt: 'Show me the steel bottle.',
    shows:
      "show_product changes only what this page shows, so the server hands it to the page: the browser's own gate checks it, runs it and commits it to the page's view, and its result goes back to the model.",
    script: (view) =>
      view.step === 0
        ? { content: 'Here is the one I mean.', calls: [call(view, 0, 'show_product', { sku: 'bottle' })] }
        : closing(
            view.replies[0],
            (content) =>
              `That is the ${String(readJson(content).name)}, ${String(readJson(content).price)}. It is on your screen now.`,
            (reply) => `I could not show it: ${whyNot(reply)}`,
          ),
  },
  {
    id: 'guard',
    title: 'A model stuck on bad arguments',
    prompt: 'Pay for my cart: twelve dollars fifty.',
    shows:
      'The model keeps sending a bad amount_cents, turn after turn. The continuation guard stops asking it and says why.',
    script: (view) => ({
      content: view.step === 0 ? 'Paying $12.50.' : 'Let me try that amount again.',
      calls: [
        call(view, 0, 'checkout', {
          amount_cents: BAD_AMOUNTS[view.step % BAD_AMOUNTS.length],
          currency: 'USD',
        }),
      ],
    }),
  },
  {
    id: 'flood',
    title: 'A flood of 200 calls',
    prompt: 'Stock the cart for the scout troop: 200 items, one call each.',
    shows: `One turn streams ${FLOOD_SIZE} calls; every tenth asks for quantity 0 and is rejected. Each settles on its own while the page stays responsive.`,
    script: (view) => {
      if (view.step === 0) {
        return {
          content: `Adding ${FLOOD_SIZE} items.`,
          calls: Array.from({ length: FLOOD_SIZE }, (_, index) =>
            call(view, index, 'add_to_cart', {
              sku: SKUS[index % SKUS.length],
              quantity: (index + 1) % FLOOD_INVALID_EVERY === 0 ? 0 : 1,
            }),
          ),
        };
      }
      const added = view.replies.filter((reply) => reply.code === undefined).length;
      return {
        content: `Added ${added} items in ${added} calls; ${view.replies.length - added} calls were refused because quantity must be 1 to 10.`,
      };
    },
  },
];

export function scenarioById(id: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.id === id);
}
