import type { CompensationLink, Doubt, ToolCallRecord, ToolGate } from '@toolgate/core';
import { forwardRef, useState, type ComponentPropsWithoutRef, type ReactNode } from 'react';
import { pressKey, useArmed, useFocusCatch } from './press-guard.ts';
import { useGate } from './provider.tsx';
import {
  away,
  fieldsOf,
  fill,
  isHeld,
  REMOTE_LABELS,
  shownRemoteParts,
  text,
  usePart,
  wordFor,
  type Words,
} from './status-part.tsx';
import { useConnection } from './use-gate-connection.ts';

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusSettle
 * -----------------------------------------------------------------------------------------------*/

/**
 * What {@link ToolCallStatusSettle} hands its render function for a call held in doubt: why nobody
 * can tell what happened, whether a settlement pressed now is sent (`ready` is `false` while a
 * request is on its way, while the server is out of reach, and for the status's `pressDelayMs`
 * after the call was held or changed), and the two settlements. Each returns `false`, and sends
 * nothing, when it is not ready.
 *
 * @example
 * const render = ({ doubt, ready, committed, notExecuted }: ToolCallSettler) => (
 *   <p>
 *     {doubt.message}
 *     <button aria-disabled={!ready} onClick={() => committed({ id: 'ch_42' }, 'in the dashboard')}>Charged</button>
 *     <button aria-disabled={!ready} onClick={() => notExecuted('no charge with this key')}>Not charged</button>
 *   </p>
 * );
 */
export interface ToolCallSettler {
  readonly doubt: Doubt;
  readonly ready: boolean;
  /** True while a settlement is on its way to the server. */
  readonly sending: boolean;
  /** It went through: commit the call with the output the tool would have returned. */
  readonly committed: (output: unknown, note?: string) => boolean;
  /** It did not happen: run the call again, once, with the same idempotency key. */
  readonly notExecuted: (note?: string) => boolean;
}

/**
 * The settle form of a call held in doubt (`executing` with `doubt`: its run was cut off or threw,
 * and the system it called could not say what happened), for a person who checked that system:
 * "It went through" commits the call with the output they give (it must be JSON; a server gate
 * checks it against the tool's `outputSchema`, and a refusal, `invalid_output`, shows in
 * `<ToolCallStatusRefusal>` while the call stays held), "It did not happen — run again" runs it
 * again once with the same key. Both send the note, how they know. Renders nothing for a call
 * that is not held.
 *
 * Headless when given a function: it is called with a {@link ToolCallSettler} and the app renders
 * the form. Its settlements land only on what the person sees: a press in the first
 * `pressDelayMs` after the call was held or changed, while a request is on its way, or while the
 * server is out of reach sends nothing.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusRefusal />
 *   <ToolCallStatusSettle />
 * </ToolCallStatus>
 */
const SETTLE_NAME = 'ToolCallStatusSettle';

export function ToolCallStatusSettle({
  children,
}: {
  readonly children?: (settler: ToolCallSettler) => ReactNode;
}): ReactNode {
  const { call, request, controls, labels, pressDelayMs, root } = usePart(SETTLE_NAME);
  const connection = useConnection(useGate(SETTLE_NAME), away);
  const Note = shownRemoteParts()?.Note;
  const held = isHeld(call);
  const doubt = held ? call?.doubt : undefined;
  const sending = request?.state === 'sending';
  const armed = useArmed(pressKey(call?.id, doubt?.at, request?.state, request?.action), pressDelayMs);
  const focus = useFocusCatch(root, pressKey(held));
  if (doubt === undefined) return null;
  const ready = armed && !sending && connection === undefined;
  const settler: ToolCallSettler = {
    doubt,
    ready,
    sending,
    committed: (output, note) =>
      ready && controls.resolve({ outcome: 'committed', output, ...(note === undefined ? {} : { note }) }),
    notExecuted: (note) =>
      ready && controls.resolve({ outcome: 'not_executed', ...(note === undefined ? {} : { note }) }),
  };
  if (children !== undefined) return children(settler);
  return (
    <div data-toolgate="settle" onFocus={focus.onFocus} onBlur={focus.onBlur}>
      {connection === undefined || Note === undefined ? null : (
        <Note connection={connection} labels={labels} />
      )}
      <SettleForm settler={settler} labels={labels} />
    </div>
  );
}

type Outcome = 'committed' | 'not_executed';

/** The default form: the output as JSON, a note, and the two settlements, each its own button. */
function SettleForm({
  settler,
  labels,
}: {
  readonly settler: ToolCallSettler;
  readonly labels: Words;
}): ReactNode {
  const [output, setOutput] = useState('');
  const [note, setNote] = useState('');
  const [notJson, setNotJson] = useState<string | undefined>(undefined);
  const [pressed, setPressed] = useState<Outcome | undefined>(undefined);
  const given = note.trim() === '' ? undefined : note.trim();
  const settle = (outcome: Outcome) => {
    if (!settler.ready) return;
    if (outcome === 'not_executed') {
      setNotJson(undefined);
      if (settler.notExecuted(given)) setPressed(outcome);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch (error) {
      // Nothing is sent: an output that is not JSON is not one any tool returns.
      setNotJson(fill(labels, 'settleNotJson', { message: (error as Error).message }));
      return;
    }
    setNotJson(undefined);
    if (settler.committed(value, given)) setPressed(outcome);
  };
  // Keyed by outcome: a press meant for one settlement never lands on the other.
  const button = (outcome: Outcome, word: 'settleCommitted' | 'settleNotExecuted') => (
    <button
      key={outcome}
      type="button"
      data-action={`resolve-${outcome}`}
      aria-busy={(settler.sending && pressed === outcome) || undefined}
      aria-disabled={!settler.ready || undefined}
      onClick={() => settle(outcome)}
    >
      {settler.sending && pressed === outcome ? wordFor(labels, 'settling') : wordFor(labels, word)}
    </button>
  );
  return (
    <>
      <p data-toolgate="doubt">{text(settler.doubt.message)}</p>
      <label data-toolgate="settle-output">
        {wordFor(labels, 'settleOutput')}{' '}
        <textarea
          name="output"
          value={output}
          spellCheck={false}
          aria-invalid={notJson !== undefined || undefined}
          onChange={(event) => setOutput(event.currentTarget.value)}
        />
      </label>
      <label data-toolgate="settle-note">
        {wordFor(labels, 'settleNote')}{' '}
        <input name="note" value={note} onChange={(event) => setNote(event.currentTarget.value)} />
      </label>
      {notJson === undefined ? null : <p data-toolgate="settle-error">{notJson}</p>}
      {button('committed', 'settleCommitted')}
      {button('not_executed', 'settleNotExecuted')}
    </>
  );
}

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusUndo
 * -----------------------------------------------------------------------------------------------*/

/**
 * Whether a committed call can be undone from this page: the gate mirrors a server gate (it has
 * `compensate`), the call was neither undone nor is itself an undo, and the page's own definition
 * of its tool (the one both halves import) has a `compensate`.
 */
function undoable(gate: ToolGate, call: ToolCallRecord | undefined): boolean {
  if (gate.compensate === undefined || call?.status !== 'committed') return false;
  if (call.compensation !== undefined || call.compensates !== undefined) return false;
  return gate.tools.some((tool) => tool.name === call.name && typeof tool.compensate === 'function');
}

/**
 * What {@link ToolCallStatusUndo} hands its render function: the call's compensation once someone
 * asked to undo it, whether a press now is sent, and `undo(reason?)`, there while the call can be
 * undone from this page.
 *
 * @example
 * const render = ({ compensation, ready, undo }: ToolCallUndoer) =>
 *   undo ? <button aria-disabled={!ready} onClick={() => undo('returned')}>Refund</button> : compensation?.status;
 */
export interface ToolCallUndoer {
  readonly compensation: CompensationLink | undefined;
  readonly ready: boolean;
  readonly sending: boolean;
  readonly undo: ((reason?: string) => boolean) | undefined;
}

const COMPENSATION_WORDS = {
  committed: 'undone',
  cancelled: 'undoFailed',
  rejected: 'undoFailed',
  failed: 'undoFailed',
} as const;

/**
 * Undo for a committed call, and where its undo stands. The button is there while the call can be
 * undone from this page: the gate mirrors a server gate, the call was not undone yet, and the
 * page's definition of its tool has a `compensate` (the server runs its own, as a call of its own,
 * `${id}:compensate`, approved like the tool). Once someone asked, it shows that call's id and
 * status (`data-status`): being undone, undone, or why not. A press in the first `pressDelayMs`
 * after the button appears, while a request is on its way, or while the server is out of reach
 * sends nothing; a refusal shows in `<ToolCallStatusRefusal>`. Headless when given a function.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusRefusal />
 *   <ToolCallStatusUndo />
 * </ToolCallStatus>
 */
const UNDO_NAME = 'ToolCallStatusUndo';

// Its displayName is given in the call that makes it, so that an app that never renders it does not
// ship it (an assignment after the fact would keep it).
export const ToolCallStatusUndo = /* @__PURE__ */ Object.assign(
  /* @__PURE__ */ forwardRef<
    HTMLDivElement,
    Omit<ComponentPropsWithoutRef<'div'>, 'children'> & {
      readonly children?: (undoer: ToolCallUndoer) => ReactNode;
    }
  >(function ToolCallStatusUndo({ children, ...props }, ref) {
    const { call, request, controls, labels, pressDelayMs } = usePart(UNDO_NAME);
    const gate = useGate(UNDO_NAME);
    const live = useConnection(gate, away) === undefined;
    const can = undoable(gate, call);
    const sending = request?.state === 'sending' && request.action === 'compensate';
    const armed = useArmed(pressKey(call?.id, can, request?.state, request?.action), pressDelayMs);
    const compensation =
      call?.status === 'committed' && fieldsOf(call.compensation) ? call.compensation : undefined;
    const ready = can && armed && live && request?.state !== 'sending';
    const undoer: ToolCallUndoer = {
      compensation,
      ready,
      sending,
      undo: can ? (reason) => ready && controls.compensate(reason) : undefined,
    };
    if (children !== undefined) return children(undoer);
    if (!can && compensation === undefined) return null;
    return (
      <div data-toolgate="undo" {...props} ref={ref}>
        {compensation === undefined ? (
          <button
            type="button"
            data-action="compensate"
            aria-busy={sending || undefined}
            aria-disabled={!ready || undefined}
            onClick={() => undoer.undo?.()}
          >
            {wordFor(labels, sending ? 'undoing' : 'undo', REMOTE_LABELS)}
          </button>
        ) : (
          <CompensationState compensation={compensation} labels={labels} />
        )}
      </div>
    );
  }),
  { displayName: UNDO_NAME },
);

/** Where a committed call's undo stands: its call's id, and why it did not commit when it ended otherwise. */
function CompensationState({
  compensation,
  labels,
}: {
  readonly compensation: CompensationLink;
  readonly labels: Words;
}): ReactNode {
  const status = text(compensation.status);
  const words =
    status !== undefined && Object.hasOwn(COMPENSATION_WORDS, status)
      ? COMPENSATION_WORDS[status as keyof typeof COMPENSATION_WORDS]
      : 'undoRunning';
  const failure = text(fieldsOf(compensation.failure)?.message);
  return (
    <span data-toolgate="compensation" data-status={status}>
      {wordFor(labels, words, REMOTE_LABELS)}{' '}
      <code data-toolgate="compensation-id">{text(compensation.id)}</code>
      {words === 'undoFailed' && failure !== undefined ? `: ${failure}` : null}
    </span>
  );
}
