import type {
  CallRequest,
  RemoteConnection,
  Resolution,
  ToolCallRecord,
  ToolCallStatus as Status,
} from '@toolgate/core';
import { createContext, useContext, type ComponentType, type ReactNode, type RefObject } from 'react';
import { REFUSALS, type ToolCallRefusalWords } from './refusal-words.ts';

/**
 * What a person can do to a call. Each returns `false`, and nothing moves, when the call is not in
 * a status that allows it (already approved elsewhere, already settled, not proposed yet).
 *
 * @example
 * const { approve, deny } = useToolCall(id);
 * <button onClick={() => deny('not this card')}>Deny</button>
 */
export interface ToolCallControls {
  /** Runs a call that awaits approval. */
  readonly approve: () => boolean;
  /**
   * Approves the call with an edited input (a server gate checks it as a proposal and runs it, or
   * refuses it `invalid_edit` and keeps waiting); a gate that decides on the spot answers `false`.
   */
  readonly approveEdited: (input: unknown) => boolean;
  /** Cancels a call that awaits approval, with code `approval_denied`. */
  readonly deny: (reason?: string) => boolean;
  /** Cancels a call that has not ended, with code `user_cancelled`; aborts its tool if it is running. */
  readonly cancel: (reason?: string) => boolean;
  /**
   * Settles a call held in doubt on the word of a person who checked: `committed` with the output
   * they found (a server gate checks it against the tool's `outputSchema` and refuses
   * `invalid_output`), or `not_executed`, which runs it again once with the same idempotency key.
   */
  readonly resolve: (resolution: Resolution) => boolean;
  /** Undoes a committed call through its tool's `compensate` (a gate that mirrors a server gate); `false` with any other gate. */
  readonly compensate: (reason?: string) => boolean;
}

// What the parts of `<ToolCallStatus>` share: its words and the call they show. How a press is kept
// from landing on a control the person has not seen yet is `press-guard.ts`.

/**
 * The words `<ToolCallStatus>` shows: one per status, `denied` for a call a person denied, the
 * three action buttons, each button while its request is on its way to a server (`approving`…),
 * what precedes a refusal (`approveRefused`…) and the sentence for each refusal code
 * (`refusals`), and, while a remote gate is not live, what its connection is doing
 * (`connecting`, `notLive` while reconnecting, `offline`, `disconnected`) with `lastEvent` before
 * the time the server was last heard from; for a call held in doubt, `held` and the settle
 * form's words (`settleOutput`…), and for a committed call, `undo` and where its compensation
 * stands (`undoRunning`, `undone`, `undoFailed`); and the parts' own words, from `unnamedTool` to
 * `approvedBy` and `changedBy`. A `{name}` in a word stands for what is put there (`{names}`,
 * `{left}`, `{required}`, `{by}`, `{message}`). Pass some or all of them as `labels` to translate or
 * reword.
 *
 * @example
 * const labels: Partial<ToolCallStatusLabels> = { awaiting_approval: 'Waiting for you', approve: 'Allow', approvalsLeft: 'encore {left} sur {required}', refusals: { stale: 'the input changed: read it again.' } };
 */
export interface ToolCallStatusLabels extends Record<Status, string> {
  readonly denied: string;
  readonly approve: string;
  readonly deny: string;
  readonly cancel: string;
  readonly approving: string;
  readonly denying: string;
  readonly cancelling: string;
  readonly approveRefused: string;
  readonly denyRefused: string;
  readonly cancelRefused: string;
  readonly resolveRefused: string;
  readonly compensateRefused: string;
  /** An `executing` call held in doubt: nobody can tell whether its effect happened. */
  readonly held: string;
  /** After `committed` for a call settled without its run's own answer, on the word of the system it called. */
  readonly evidenceDownstream: string;
  /** After `committed` for a call a person settled; `{by}` is who. */
  readonly evidencePerson: string;
  /** Who, when a record names nobody: in `evidencePerson` and `changedBy`. */
  readonly somePerson: string;
  /** The tool's name for a record that has none. */
  readonly unnamedTool: string;
  /** The path of an issue about the whole input, and about the whole output. */
  readonly wholeArguments: string;
  readonly wholeOutput: string;
  /** A call that needs several approvers: who approved (`{names}`), or nobody yet. */
  readonly approvedBy: string;
  readonly noApprovals: string;
  /** After `approvedBy` or `noApprovals`: `{left}` approvals of `{required}` still needed. */
  readonly approvalsLeft: string;
  /** A call a tool's approvers must decide: who of those asked has not decided yet (`{names}`). */
  readonly waitingFor: string;
  /** The budget that sent the call to a person; `{message}` is the budget's words. */
  readonly overBudget: string;
  /** Before a person's changes to the input; `{by}` is who. */
  readonly changedBy: string;
  /** A change's path when it replaced the whole input, and a value that was or is not there. */
  readonly wholeInput: string;
  readonly noValue: string;
  /** The settle form: the output field, the note field, and the two settlements. */
  readonly settleOutput: string;
  readonly settleNote: string;
  readonly settleCommitted: string;
  readonly settleNotExecuted: string;
  readonly settling: string;
  /** Shown, and nothing sent, when the output given is not JSON; `{message}` is the parser's words. */
  readonly settleNotJson: string;
  /** The Undo button of a committed call whose tool can be undone, and while it is being sent. */
  readonly undo: string;
  readonly undoing: string;
  /** Where a committed call's compensation stands: running (or waiting for approval), done, or ended otherwise. */
  readonly undoRunning: string;
  readonly undone: string;
  readonly undoFailed: string;
  /** While a remote gate's feed is being opened again after it broke. */
  readonly notLive: string;
  readonly connecting: string;
  readonly offline: string;
  /** A remote gate whose feed stopped for good (`closed`). */
  readonly disconnected: string;
  /** Before the time the server was last heard from, while it is not live. */
  readonly lastEvent: string;
  /** The sentence after `approveRefused` (…) for each refusal code; the ones you give replace the defaults one by one. */
  readonly refusals: ToolCallRefusalWords;
}

/** The words every gate's calls show. */
export const LABELS: Words = {
  pending: 'Preparing',
  validated: 'Checked',
  awaiting_approval: 'Needs approval',
  executing: 'Running',
  committed: 'Done',
  cancelled: 'Cancelled',
  rejected: 'Rejected',
  failed: 'Failed',
  denied: 'Denied',
  approve: 'Approve',
  deny: 'Deny',
  cancel: 'Cancel',
  approving: 'Approving…',
  denying: 'Denying…',
  cancelling: 'Cancelling…',
  held: 'Outcome unknown — check, then settle',
  evidenceDownstream: 'settled on evidence from the system it called',
  evidencePerson: 'settled by {by}',
  somePerson: 'a person',
  unnamedTool: 'Tool call',
  wholeArguments: '(arguments)',
  wholeOutput: '(output)',
  settleOutput: 'What the tool returned (JSON)',
  settleNote: 'How you know',
  settleCommitted: 'It went through',
  settleNotExecuted: 'It did not happen — run again',
  settling: 'Settling…',
  settleNotJson:
    'That is not JSON ({message}): give the output as the tool returns it, e.g. {"id": "ch_42"}.',
};

/**
 * The words only a server gate's calls show (its refusals, its connection, approvers, edits and
 * undoing): only the parts that show them hold them, so an app whose gate decides on the spot does
 * not ship them.
 */
export const REMOTE_LABELS: Words = {
  approveRefused: 'Not approved',
  denyRefused: 'Not denied',
  cancelRefused: 'Not cancelled',
  resolveRefused: 'Not settled',
  compensateRefused: 'Not undone',
  notLive: 'The server is out of reach; reconnecting…',
  connecting: 'Connecting to the server…',
  offline:
    'Offline: the server cannot be reached. You can decide once the connection is back; it is retried on its own.',
  disconnected: 'Disconnected from the server. Reload the page to connect again.',
  lastEvent: 'Last update:',
  approvedBy: 'Approved by {names}',
  noApprovals: 'No approvals yet',
  approvalsLeft: '{left} more of {required} needed',
  waitingFor: 'Waiting for {names}',
  overBudget: 'Over budget: {message}',
  changedBy: 'Changed by {by}:',
  wholeInput: '(input)',
  noValue: '(none)',
  undo: 'Undo',
  undoing: 'Undoing…',
  undoRunning: 'Being undone',
  undone: 'Undone',
  undoFailed: 'Undo failed',
};

/**
 * Only text reaches the page: a record from elsewhere (a saved transcript, a server) or a label may
 * hold anything, and an object would throw or, shaped like an element, render as one.
 */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Some or all of the words, as the parts hold them: the app's over the defaults. */
export type Words = Partial<ToolCallStatusLabels>;

/**
 * The word for a status or an action: the given label when it is text, else the default of
 * `defaults` (the words of every gate unless a part says otherwise).
 */
export function wordFor(labels: Words, key: unknown, defaults: Words = LABELS): string {
  if (typeof key !== 'string' || !Object.hasOwn(defaults, key)) return text(key) ?? '';
  const word = key as keyof ToolCallStatusLabels;
  return text(labels[word]) ?? text(defaults[word]) ?? '';
}

/**
 * The word for `key` with each `{name}` in it replaced by `values[name]`, in one pass, so a value
 * that itself holds `{…}` (a person's name, a server's message) is shown as it is.
 */
export function fill(
  labels: Words,
  key: keyof ToolCallStatusLabels,
  values: Readonly<Record<string, string>>,
  defaults: Words = LABELS,
): string {
  return wordFor(labels, key, defaults).replace(/\{(\w+)\}/g, (slot, name: string) =>
    Object.hasOwn(values, name) ? (values[name] as string) : slot,
  );
}

/** A record field read as its fields, each `unknown`. */
export type Fields = { readonly [field: string]: unknown };

/**
 * A record field as an object whose fields are still to be checked, or nothing: a record made
 * elsewhere (a saved transcript, a server) may hold anything where an object is expected.
 */
export const fieldsOf = (value: unknown): Fields | undefined =>
  typeof value === 'object' && value !== null ? (value as Fields) : undefined;

/** The defaults with the app's words over them. */
export function mergeLabels(given: Words | undefined): Words {
  return given === undefined ? LABELS : { ...LABELS, ...given };
}

/** The default refusal sentences with the app's over them, code by code. */
export function refusalsOf(labels: Words): ToolCallRefusalWords {
  const given: unknown = labels.refusals;
  return typeof given === 'object' && given !== null ? { ...REFUSALS, ...given } : REFUSALS;
}

/** What no input is: distinct from every value a record's `input` can hold, `undefined` included. */
export const NOTHING_SHOWN: unique symbol = Symbol('nothing shown');

export interface Part {
  readonly call: ToolCallRecord | undefined;
  readonly request: CallRequest | undefined;
  readonly controls: ToolCallControls;
  readonly labels: Words;
  readonly labelId: string;
  readonly root: RefObject<HTMLDivElement | null>;
  /** The input a {@link ToolCallStatusInput} has put on the screen (the record's own object), or nothing. */
  readonly shown: unknown;
  readonly setShown: (input: unknown) => void;
  readonly pressDelayMs: number;
}

export const PartContext = createContext<Part | undefined>(undefined);

export function usePart(name: string): Part {
  const part = useContext(PartContext);
  if (part === undefined) throw new Error(`\`<${name}>\` must be used within \`<ToolCallStatus>\`.`);
  return part;
}

/** The connection while it is not live, else nothing: a live connection's `lastEventAt` re-renders no status. */
export const away = (connection: RemoteConnection): RemoteConnection | undefined =>
  connection.state === 'live' ? undefined : connection;

const CONNECTION_WORDS = {
  connecting: 'connecting',
  reconnecting: 'notLive',
  offline: 'offline',
  closed: 'disconnected',
} as const;

/** What the connection is doing while decisions cannot be sent, and when the server was last heard from. */
export function ConnectionNote({
  connection,
  labels,
}: {
  readonly connection: RemoteConnection;
  readonly labels: Words;
}): ReactNode {
  const state = text(connection.state) ?? 'reconnecting';
  const at = connection.lastEventAt;
  const words = Object.hasOwn(CONNECTION_WORDS, state)
    ? CONNECTION_WORDS[state as keyof typeof CONNECTION_WORDS]
    : 'notLive';
  const known = typeof at === 'number' && Number.isFinite(at);
  return (
    <span data-toolgate="connection" data-state={state} role="note">
      {wordFor(labels, words, REMOTE_LABELS)}
      {known ? (
        <>
          {' '}
          <span data-toolgate="last-event">
            {wordFor(labels, 'lastEvent', REMOTE_LABELS)}{' '}
            <time dateTime={new Date(at).toISOString()}>{new Date(at).toLocaleTimeString()}</time>
          </span>
        </>
      ) : null}
    </span>
  );
}

/** Whether a call is held in doubt: running, and nobody can tell whether its effect happened. */
export const isHeld = (call: ToolCallRecord | undefined): boolean =>
  call?.status === 'executing' && typeof call.doubt === 'object' && call.doubt !== null;

/**
 * The parts `<ToolCallStatus>` shows only for a server gate's calls: those before its actions
 * (approvers, edits, a refused request), the one after (Undo) and the connection's note.
 */
export interface RemoteParts {
  readonly Before: ComponentType;
  readonly After: ComponentType;
  readonly Note: typeof ConnectionNote;
}

// Set by what only an app that mirrors a server gate uses (useRemoteGate, <ApprovalInbox>,
// showRemoteParts), so that a gate that decides on the spot ships none of them.
let remoteParts: RemoteParts | undefined;

const partsListeners = new Set<() => void>();

/** The remote parts, once something has asked for them. */
export const shownRemoteParts = (): RemoteParts | undefined => remoteParts;

export function keepRemoteParts(parts: RemoteParts): void {
  if (remoteParts === parts) return;
  remoteParts = parts;
  // Told after the render that kept them (useApprovals keeps them as it renders): a status waiting
  // for them must not be updated while another component renders.
  queueMicrotask(() => {
    for (const listener of [...partsListeners]) listener();
  });
}

/** Calls `onShown` once the remote parts are kept; answers how to stop listening. */
export function onRemoteParts(onShown: () => void): () => void {
  partsListeners.add(onShown);
  return () => partsListeners.delete(onShown);
}
