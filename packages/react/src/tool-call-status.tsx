import type { CallRequest, RemoteConnection, ToolCallRecord, ToolCallStatus as Status } from '@toolgate/core';
import {
  createContext,
  forwardRef,
  memo,
  useContext,
  useEffect,
  useId,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type ComponentPropsWithoutRef,
  type ReactNode,
  type RefObject,
} from 'react';
import { useGate } from './provider.tsx';
import { REFUSALS, refusalSentence, type ToolCallRefusalWords } from './refusal-words.ts';
import { useConnection } from './use-gate-connection.ts';
import { useCall, useCallRequest, useControls, type ToolCallControls } from './use-tool-call.ts';

/**
 * The words `<ToolCallStatus>` shows: one per status, `denied` for a call a person denied, the
 * three action buttons, each button while its request is on its way to a server (`approving`…),
 * what precedes a refusal (`approveRefused`…) and the sentence for each refusal code
 * (`refusals`), and, while a remote gate is not live, what its connection is doing
 * (`connecting`, `notLive` while reconnecting, `offline`, `disconnected`) with `lastEvent` before
 * the time the server was last heard from. Pass some or all of them as `labels` to translate or
 * reword.
 *
 * @example
 * const labels: Partial<ToolCallStatusLabels> = { awaiting_approval: 'Waiting for you', approve: 'Allow', refusals: { stale: 'the input changed: read it again.' } };
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

const LABELS: ToolCallStatusLabels = {
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
  refusals: REFUSALS,
};

type Action = 'approve' | 'deny' | 'cancel';
const SENDING = { approve: 'approving', deny: 'denying', cancel: 'cancelling' } as const;
const REFUSED = {
  approve: 'approveRefused',
  deny: 'denyRefused',
  cancel: 'cancelRefused',
  resolve: 'resolveRefused',
  compensate: 'compensateRefused',
} as const;

/**
 * Only text reaches the page: a record from elsewhere (a saved transcript, a server) or a label may
 * hold anything, and an object would throw or, shaped like an element, render as one.
 */
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The word for a status or an action: the given label when it is text, else the default. */
function wordFor(labels: ToolCallStatusLabels, key: unknown): string {
  if (typeof key !== 'string' || !Object.hasOwn(LABELS, key)) return text(key) ?? '';
  const word = key as keyof ToolCallStatusLabels;
  return text(labels[word]) ?? text(LABELS[word]) ?? '';
}

/** The defaults with the app's words over them; the app's refusal sentences over the default ones, code by code. */
function mergeLabels(given: Partial<ToolCallStatusLabels> | undefined): ToolCallStatusLabels {
  if (given === undefined) return LABELS;
  const refusals: unknown = given.refusals;
  return {
    ...LABELS,
    ...given,
    refusals: typeof refusals === 'object' && refusals !== null ? { ...REFUSALS, ...refusals } : REFUSALS,
  };
}

/** What no input is: distinct from every value a record's `input` can hold, `undefined` included. */
const NOTHING_SHOWN: unique symbol = Symbol('nothing shown');

interface Part {
  readonly call: ToolCallRecord | undefined;
  readonly request: CallRequest | undefined;
  readonly controls: ToolCallControls;
  readonly labels: ToolCallStatusLabels;
  readonly labelId: string;
  readonly root: RefObject<HTMLDivElement | null>;
  /** The input a {@link ToolCallStatusInput} has put on the screen (the record's own object), or nothing. */
  readonly shown: unknown;
  readonly setShown: (input: unknown) => void;
  readonly pressDelayMs: number;
}

/** How long after Approve, Deny or Cancel appears or changes a press on it is ignored, by default. */
const PRESS_DELAY_MS = 500;

const PartContext = createContext<Part | undefined>(undefined);

function usePart(name: string): Part {
  const part = useContext(PartContext);
  if (part === undefined) throw new Error(`\`<${name}>\` must be used within \`<ToolCallStatus>\`.`);
  return part;
}

// A preview keeps a call's history, and eviction copies it: neither changes what is shown here. An
// approval of several, an edit, a hold in doubt or a compensation changes the record without a move.
const sameStatus = (last: ToolCallRecord, next: ToolCallRecord): boolean =>
  last.history === next.history &&
  last.approval === next.approval &&
  last.edit === next.edit &&
  last.doubt === next.doubt &&
  last.attempt === next.attempt &&
  last.compensation === next.compensation;

/**
 * What {@link ToolCallStatus} takes, beside any `<div>` attribute.
 *
 * @example
 * <ToolCallStatus id={call.id} className="call" labels={{ committed: 'Paid' }} />
 */
export interface ToolCallStatusProps extends Omit<ComponentPropsWithoutRef<'div'>, 'id'> {
  /** The id of the call to show. */
  readonly id?: string;
  /** Or the call itself; the component still follows the live call with that id when the gate has it. */
  readonly call?: ToolCallRecord;
  /** Words to use instead of the defaults; keep the object stable (module scope) so the component can skip re-renders. */
  readonly labels?: Partial<ToolCallStatusLabels>;
  /**
   * How long (ms) after Approve, Deny or Cancel appears or changes a press on it does nothing, so
   * that a click or Enter meant for what was there before cannot land on it. Default 500.
   */
  readonly pressDelayMs?: number;
}

/**
 * One call's status, for people and screen readers. It subscribes to its own call, so in a long
 * transcript only the call that moved re-renders. The root carries `data-status` (and
 * `data-reason` with the reason code once there is one) and is a polite live region
 * (`role="status"`), so each change is announced.
 *
 * Without children it shows the label, the input (exactly what Approve approves), the reason (each
 * offending argument path when there are issues), and Approve/Deny while the call awaits approval
 * or Cancel while it runs. With children, compose the parts yourself: {@link ToolCallStatusLabel},
 * {@link ToolCallStatusInput}, {@link ToolCallStatusReason}, {@link ToolCallStatusActions}, or your
 * own markup. Children render from the start; each part renders nothing until the gate knows the call.
 *
 * Approve binds what is shown: Approve and Deny are enabled only once a {@link ToolCallStatusInput}
 * inside the same status has rendered the input of the very record Approve sends (its hash, to a
 * server), and a press in the first `pressDelayMs` after a button appears or changes does nothing.
 * To show the input your own way, pass `<ToolCallStatusInput>` a function of the input: that is
 * the one way to put your view beside Approve, and it is always the approved input. Everything is rendered as text, never as HTML,
 * and only strings are rendered: a reason or name that is not one (in a record made elsewhere) is left out.
 * Style it through the attributes, or import `@toolgate/react/styles.css`.
 *
 * @example
 * import '@toolgate/react/styles.css';
 *
 * <ToolCallStatus id={part.toolCallId} />
 *
 * <ToolCallStatus id={id} className="call">
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusActions />
 * </ToolCallStatus>
 */
export const ToolCallStatus = memo(
  forwardRef<HTMLDivElement, ToolCallStatusProps>(function ToolCallStatus(
    { id, call: given, labels, pressDelayMs = PRESS_DELAY_MS, children, ...props },
    ref,
  ) {
    const gate = useGate('ToolCallStatus');
    const callId = id ?? given?.id;
    const call = useCall(gate, callId, sameStatus) ?? given;
    const request = useCallRequest(gate, callId);
    const controls = useControls(gate, callId);
    const labelId = useId();
    const root = useRef<HTMLDivElement>(null);
    const [shown, setShown] = useState<unknown>(NOTHING_SHOWN);
    useImperativeHandle(ref, () => root.current as HTMLDivElement, []);
    return (
      <PartContext.Provider
        value={{
          call,
          request,
          controls,
          labels: mergeLabels(labels),
          labelId,
          root,
          shown,
          setShown,
          pressDelayMs,
        }}
      >
        <div
          role="status"
          aria-live="polite"
          tabIndex={-1}
          data-toolgate="call"
          data-status={text(call?.status)}
          data-reason={text(call?.reason?.code)}
          data-request={text(request?.state)}
          {...props}
          ref={root}
        >
          {/* Children are the app's layout: they are there from the start (each part renders nothing
              until the gate knows the call), so a slot of the app's own holds its place. */}
          {children ??
            (call !== undefined && (
              <>
                <ToolCallStatusLabel />
                <ToolCallStatusInput />
                <ToolCallStatusReason />
                <ToolCallStatusApprovals />
                <ToolCallStatusChanges />
                <ToolCallStatusRefusal />
                <ToolCallStatusActions />
              </>
            ))}
        </div>
      </PartContext.Provider>
    );
  }),
);

/**
 * The tool's name and the call's status in words (`Denied` for a call a person denied). The
 * action buttons point at it with `aria-describedby`. Children replace the default text.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 * </ToolCallStatus>
 */
export const ToolCallStatusLabel = forwardRef<HTMLSpanElement, ComponentPropsWithoutRef<'span'>>(
  function ToolCallStatusLabel({ children, ...props }, ref) {
    const { call, labels, labelId } = usePart('ToolCallStatusLabel');
    if (call === undefined) return null;
    return (
      <span data-toolgate="label" {...props} id={labelId} ref={ref}>
        {children ?? (
          <>
            <span data-toolgate="tool">{text(call.name) || 'Tool call'}</span>{' '}
            <span data-toolgate="state">
              {wordFor(labels, call.reason?.code === 'approval_denied' ? 'denied' : call.status)}
            </span>
          </>
        )}
      </span>
    );
  },
);

/**
 * What {@link ToolCallStatusInput} takes, beside any `<div>` attribute.
 *
 * @example
 * const props: ToolCallStatusInputProps = { className: 'input', children: (input) => <TransferSummary transfer={input as Transfer} /> };
 */
export interface ToolCallStatusInputProps extends Omit<ComponentPropsWithoutRef<'div'>, 'children'> {
  /**
   * Your own view of the input, given the record's input itself: the exact value Approve approves.
   * Without it the input is shown as indented JSON.
   */
  readonly children?: (input: unknown) => ReactNode;
}

/**
 * The call's validated input, from the same record Approve sends, once there is one: as JSON, or
 * as the function you pass as children renders it. Approve and Deny wait for it: until this part
 * has put the record's input on the screen they stay disabled, so a person never approves an
 * input they were not shown (a preview still streaming, another component's rendering). It is not
 * a live region of its own (`aria-live="off"`): a long input is read when reached, not announced.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusInput>{(input) => <TransferSummary transfer={input as Transfer} />}</ToolCallStatusInput>
 *   <ToolCallStatusActions />
 * </ToolCallStatus>
 */
export const ToolCallStatusInput = forwardRef<HTMLDivElement, ToolCallStatusInputProps>(
  function ToolCallStatusInput({ children, ...props }, ref) {
    const { call, setShown } = usePart('ToolCallStatusInput');
    const input: unknown = call?.input;
    const has = call !== undefined && input !== undefined;
    useLayoutEffect(() => {
      if (!has) return;
      setShown(input);
      return () => setShown(NOTHING_SHOWN);
    }, [has, input, setShown]);
    if (!has) return null;
    return (
      <div data-toolgate="input" aria-live="off" {...props} ref={ref}>
        {children === undefined ? <pre>{inputText(input)}</pre> : children(input)}
      </div>
    );
  },
);

function inputText(input: unknown): string {
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}

/** The connection while it is not live, else nothing: a live connection's `lastEventAt` re-renders no status. */
const away = (connection: RemoteConnection): RemoteConnection | undefined =>
  connection.state === 'live' ? undefined : connection;

const CONNECTION_WORDS = {
  connecting: 'connecting',
  reconnecting: 'notLive',
  offline: 'offline',
  closed: 'disconnected',
} as const;

/** What the connection is doing while decisions cannot be sent, and when the server was last heard from. */
function ConnectionNote({
  connection,
  labels,
}: {
  readonly connection: RemoteConnection;
  readonly labels: ToolCallStatusLabels;
}): ReactNode {
  const state = text(connection.state) ?? 'reconnecting';
  const at = connection.lastEventAt;
  const words = Object.hasOwn(CONNECTION_WORDS, state)
    ? CONNECTION_WORDS[state as keyof typeof CONNECTION_WORDS]
    : 'notLive';
  const known = typeof at === 'number' && Number.isFinite(at);
  return (
    <span data-toolgate="connection" data-state={state} role="note">
      {wordFor(labels, words)}
      {known ? (
        <>
          {' '}
          <span data-toolgate="last-event">
            {wordFor(labels, 'lastEvent')}{' '}
            <time dateTime={new Date(at).toISOString()}>{new Date(at).toLocaleTimeString()}</time>
          </span>
        </>
      ) : null}
    </span>
  );
}

/**
 * Whether a press may land: `false` from the moment `key` changes (a button appeared, or what it
 * acts on changed) until `delayMs` have passed.
 */
function useArmed(key: string, delayMs: number): boolean {
  const [armed, setArmed] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (delayMs <= 0) return;
    const timer = setTimeout(() => setArmed(key), delayMs);
    return () => clearTimeout(timer);
  }, [key, delayMs]);
  return delayMs <= 0 || armed === key;
}

// A number per input object, so that a new input (another record's) re-arms the buttons.
const inputIds = new WeakMap<object, number>();
let nextInputId = 0;
function inputKey(input: unknown): string {
  if (typeof input !== 'object' || input === null) return `v:${String(input)}`;
  let known = inputIds.get(input);
  if (known === undefined) inputIds.set(input, (known = ++nextInputId));
  return `o:${known}`;
}

/**
 * Why a rejected, cancelled or failed call ended: each offending path and what is wrong with it
 * when the reason has issues, its message otherwise. Renders nothing for other statuses.
 * `data-code` carries the reason code.
 *
 * @example
 * <ToolCallStatusReason className="why" />
 */
export const ToolCallStatusReason = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusReason({ children, ...props }, ref) {
    const { call } = usePart('ToolCallStatusReason');
    const reason: unknown = call?.reason;
    if (typeof reason !== 'object' || reason === null) return null;
    const { code, message, issues } = reason as { code?: unknown; message?: unknown; issues?: unknown };
    const whole = code === 'output_invalid' ? '(output)' : '(arguments)';
    return (
      <div data-toolgate="reason" data-code={text(code)} {...props} ref={ref}>
        {children ??
          (Array.isArray(issues) && issues.length > 0 ? (
            <ul>
              {issues.map((issue: unknown, i) => {
                const { path, message: says } = (
                  typeof issue === 'object' && issue !== null ? issue : {}
                ) as { path?: unknown; message?: unknown };
                return (
                  <li key={i}>
                    <code>{text(path) || whole}</code> {text(says)}
                  </li>
                );
              })}
            </ul>
          ) : (
            text(message)
          ))}
      </div>
    );
  },
);

/**
 * Why a request about the call did not go through, and what to do now: the refusal's label
 * (`Not approved`) and a sentence for its code, e.g. `stale` "the input changed since you saw it.
 * Review the input shown now, then decide again.", `offline` "it was not sent: the server was out
 * of reach. Decide again once the connection is back." (see `labels.refusals`); for a code it has
 * no sentence for, the server's own message. Renders nothing otherwise, and nothing with a gate
 * that decides on the spot. It sits inside the status's live region, so the refusal is announced.
 * `data-code` carries the code.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusRefusal />
 *   <ToolCallStatusActions />
 * </ToolCallStatus>
 */
export const ToolCallStatusRefusal = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusRefusal({ children, ...props }, ref) {
    const { request, labels } = usePart('ToolCallStatusRefusal');
    if (request?.state !== 'refused') return null;
    return (
      <div data-toolgate="refusal" data-code={request.error.code} {...props} ref={ref}>
        {children ??
          `${wordFor(labels, REFUSED[request.action])}: ${refusalSentence(labels.refusals, request.error)}`}
      </div>
    );
  },
);

/**
 * Approve and Deny while the call awaits approval, Cancel while it runs; nothing otherwise. Each
 * button carries `data-action`. Approve and Deny are enabled once a {@link ToolCallStatusInput} in
 * the same status shows the call's input; every button ignores presses (`aria-disabled`) for the
 * status's `pressDelayMs` after it appears or changes. When a button goes away under the keyboard
 * (Approve turns into Cancel, or the call ends), focus moves to the status itself, never to the
 * button that took its place (a second Enter must not cancel what the first approved) and never to
 * the top of the page.
 *
 * With a remote gate whose connection is not `live`, every button waits (`aria-disabled`) and a
 * note says what the connection is doing and when the server was last heard from:
 * `<span data-toolgate="connection" data-state="offline">Offline: … Last update: <time dateTime="…">…</time></span>`.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusActions className="row" />
 * </ToolCallStatus>
 */
export const ToolCallStatusActions = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusActions(props, ref) {
    const { call, request, controls, labels, labelId, root, shown, pressDelayMs } =
      usePart('ToolCallStatusActions');
    const connection = useConnection(useGate('ToolCallStatusActions'), away);
    const live = connection === undefined;
    const status = call?.status;
    const inputShown = call?.input !== undefined && shown === call.input;
    const armed = useArmed(
      `${String(status)}|${inputKey(call?.input)}|${String(inputShown)}|${request?.state ?? ''}|${request?.action ?? ''}`,
      pressDelayMs,
    );
    // Whether focus is on one of these buttons. Removing a focused button fires no blur, so this
    // stays true when a transition takes the button away, and the effect below catches the focus.
    const holdsFocus = useRef(false);
    useLayoutEffect(() => {
      const element = root.current;
      if (!holdsFocus.current || element === null) return;
      const focused = document.activeElement;
      if (focused !== null && focused !== document.body) return;
      holdsFocus.current = false;
      element.focus();
    }, [status, root]);
    if (status !== 'awaiting_approval' && status !== 'executing') return null;
    // While a request is on its way every button waits for it; `aria-disabled` rather than
    // `disabled`, so that the button under the keyboard keeps the focus.
    const sending = request?.state === 'sending' ? request.action : undefined;
    const pressable = (action: Action) =>
      live && sending === undefined && armed && (action === 'cancel' || inputShown);
    // Keyed by action: a button is never reused for another action, so a click meant for Approve that
    // lands as the call starts running cannot press the Cancel that took its place.
    const button = (action: Action) => (
      <button
        key={action}
        type="button"
        data-action={action}
        aria-describedby={labelId}
        aria-busy={sending === action || undefined}
        aria-disabled={!pressable(action) || undefined}
        onClick={() => pressable(action) && controls[action]()}
      >
        {sending === action ? wordFor(labels, SENDING[action]) : wordFor(labels, action)}
      </button>
    );
    return (
      <div
        data-toolgate="actions"
        {...props}
        ref={ref}
        onFocus={(event) => {
          holdsFocus.current = true;
          props.onFocus?.(event);
        }}
        onBlur={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget)) holdsFocus.current = false;
          props.onBlur?.(event);
        }}
      >
        {connection === undefined ? null : <ConnectionNote connection={connection} labels={labels} />}
        {status === 'executing' ? (
          button('cancel')
        ) : (
          <>
            {button('approve')}
            {button('deny')}
          </>
        )}
      </div>
    );
  },
);

/**
 * Who has approved a call that needs several approvers, how many are left, and the budget that sent
 * it to a person, when one did. Renders nothing for a call without that state (one approver, no
 * budget). `data-left` carries how many approvals are still needed.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusApprovals />
 *   <ToolCallStatusActions />
 * </ToolCallStatus>
 */
export const ToolCallStatusApprovals = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusApprovals({ children, ...props }, ref) {
    const { call } = usePart('ToolCallStatusApprovals');
    const approval: unknown = call?.approval;
    if (typeof approval !== 'object' || approval === null) return null;
    const { required, left, approvedBy, overBudget } = approval as {
      required?: unknown;
      left?: unknown;
      approvedBy?: unknown;
      overBudget?: unknown;
    };
    const names = (Array.isArray(approvedBy) ? approvedBy : [])
      .map((entry: unknown) => text((entry as { principal?: unknown } | null)?.principal))
      .filter((name) => name !== undefined);
    const over = text((overBudget as { message?: unknown } | null | undefined)?.message);
    const count = typeof left === 'number' ? left : undefined;
    return (
      <div data-toolgate="approvals" data-left={count} {...props} ref={ref}>
        {children ?? (
          <>
            {typeof required === 'number' && required > 1 && (
              <span data-toolgate="approvers">
                {names.length > 0 ? `Approved by ${names.join(', ')}` : 'No approvals yet'}
                {count !== undefined && count > 0 ? ` · ${count} more of ${required} needed` : ''}
              </span>
            )}
            {over !== undefined && <span data-toolgate="over-budget">Over budget: {over}</span>}
          </>
        )}
      </div>
    );
  },
);

/**
 * What a person changed before approving: each value's path, the model's value and theirs, and who
 * changed it. Renders nothing for a call nobody edited.
 *
 * @example
 * <ToolCallStatusChanges className="diff" />
 */
export const ToolCallStatusChanges = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusChanges({ children, ...props }, ref) {
    const { call } = usePart('ToolCallStatusChanges');
    const edit: unknown = call?.edit;
    if (typeof edit !== 'object' || edit === null) return null;
    const { by, changes } = edit as { by?: unknown; changes?: unknown };
    const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));
    return (
      <div data-toolgate="changes" {...props} ref={ref}>
        {children ?? (
          <>
            <span>Changed by {text(by) ?? 'a person'}:</span>
            <ul>
              {(Array.isArray(changes) ? changes : []).map((change: unknown, i) => {
                const { path, from, to } = (typeof change === 'object' && change !== null ? change : {}) as {
                  path?: unknown;
                  from?: unknown;
                  to?: unknown;
                };
                return (
                  <li key={i}>
                    <code>{text(path) || '(input)'}</code> {shown(from)} → {shown(to)}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </div>
    );
  },
);

/**
 * What {@link ToolCallStatusEdit} hands its render function: the input the person is shown, and
 * `approve(input)`, which approves the call with their edit of it.
 *
 * @example
 * const render = ({ input, approve }: ToolCallEditor) => <button onClick={() => approve({ ...input, amount_cents: 1000 })}>Approve 10.00</button>;
 */
export interface ToolCallEditor {
  readonly input: unknown;
  readonly approve: (input: unknown) => boolean;
}

/**
 * A headless part for approving an edited input: while the call awaits approval it calls its child
 * with the input shown and an `approve(edited)`; the app renders the form. The server gate checks
 * the edit as it checks a proposal; a refusal (`invalid_edit`) shows in `<ToolCallStatusRefusal>`
 * and the call keeps waiting. Renders nothing otherwise.
 *
 * @example
 * <ToolCallStatusEdit>
 *   {({ input, approve }) => (
 *     <form onSubmit={(event) => { event.preventDefault(); approve({ ...input, amount_cents: Number(new FormData(event.currentTarget).get('amount')) }); }}>
 *       <input name="amount" defaultValue={input.amount_cents} /> <button>Approve this amount</button>
 *     </form>
 *   )}
 * </ToolCallStatusEdit>
 */
export function ToolCallStatusEdit({
  children,
}: {
  readonly children: (editor: ToolCallEditor) => ReactNode;
}): ReactNode {
  const { call, controls } = usePart('ToolCallStatusEdit');
  if (call?.status !== 'awaiting_approval') return null;
  return children({ input: call.input, approve: controls.approveEdited });
}
