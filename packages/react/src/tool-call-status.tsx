import type { ToolCallRecord } from '@toolgate/core';
import {
  forwardRef,
  memo,
  useId,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type ComponentPropsWithoutRef,
  type ReactNode,
} from 'react';
import { PRESS_DELAY_MS, pressKey, useArmed, useFocusCatch } from './press-guard.ts';
import { useGate, useRemoteParts } from './provider.tsx';
import { refusalSentence } from './refusal-words.ts';
import {
  away,
  fieldsOf,
  fill,
  isHeld,
  mergeLabels,
  NOTHING_SHOWN,
  PartContext,
  refusalsOf,
  REMOTE_LABELS,
  shownRemoteParts,
  text,
  usePart,
  wordFor,
  type ToolCallStatusLabels,
  type Words,
} from './status-part.tsx';
import { ToolCallStatusSettle } from './tool-call-outcome.tsx';
import { useConnection } from './use-gate-connection.ts';
import { useCall, useCallRequest, useControls } from './use-tool-call.ts';

export type { ToolCallStatusLabels } from './status-part.tsx';

type Action = 'approve' | 'deny' | 'cancel';
const SENDING = { approve: 'approving', deny: 'denying', cancel: 'cancelling' } as const;
const REFUSED = {
  approve: 'approveRefused',
  deny: 'denyRefused',
  cancel: 'cancelRefused',
  resolve: 'resolveRefused',
  compensate: 'compensateRefused',
} as const;

// A preview keeps a call's history, and eviction copies it: neither changes what is shown here. An
// approval of several, an edit, a hold in doubt or a compensation changes the record without a move.
const sameStatus = (last: ToolCallRecord, next: ToolCallRecord): boolean =>
  last.history === next.history &&
  last.approval === next.approval &&
  last.edit === next.edit &&
  last.doubt === next.doubt &&
  last.attempt === next.attempt &&
  last.compensation === next.compensation;

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatus (the root)
 * -----------------------------------------------------------------------------------------------*/

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
 * or Cancel while it runs; for a call held in doubt, the settle form ({@link ToolCallStatusSettle}),
 * and for a committed call whose tool can be undone, Undo ({@link ToolCallStatusUndo}). With
 * children, compose the parts yourself: {@link ToolCallStatusLabel}, {@link ToolCallStatusInput},
 * {@link ToolCallStatusReason}, {@link ToolCallStatusActions}, or your own markup. Children render from the start; each part renders nothing until the gate knows the call.
 *
 * Approve binds what is shown: Approve and Deny are enabled only once a {@link ToolCallStatusInput}
 * inside the same status has rendered the input of the very record Approve sends (its hash, to a
 * server), and a press in the first `pressDelayMs` after a button appears or changes does nothing.
 * To show the input your own way, pass `<ToolCallStatusInput>` a function of the input: that is
 * the one way to put your view beside Approve, and it is always the approved input. Everything is rendered as text, never as HTML,
 * and only strings are rendered: a reason or name that is not one (in a record made elsewhere) is left out.
 * Style it through the attributes, or import `@toolgate/react/styles.css`. The parts also import as
 * one namespace under short names: `import * as ToolCallStatus from '@toolgate/react/tool-call-status'`,
 * then `<ToolCallStatus.Root>`, `<ToolCallStatus.Label />`….
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
const ROOT_NAME = 'ToolCallStatus';

export const ToolCallStatus = memo(
  forwardRef<HTMLDivElement, ToolCallStatusProps>(function ToolCallStatus(
    { id, call: given, labels, pressDelayMs = PRESS_DELAY_MS, children, ...props },
    ref,
  ) {
    const gate = useGate(ROOT_NAME);
    const callId = id ?? given?.id;
    const call = useCall(gate, callId, sameStatus) ?? given;
    const request = useCallRequest(gate, callId);
    const controls = useControls(gate, callId);
    const labelId = useId();
    const root = useRef<HTMLDivElement>(null);
    const [shown, setShown] = useState<unknown>(NOTHING_SHOWN);
    useImperativeHandle(ref, () => root.current as HTMLDivElement, []);
    const waiting = useRemoteParts(gate);
    const remote = shownRemoteParts();
    if (waiting) return null;
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
                {remote && <remote.Before />}
                <ToolCallStatusActions />
                <ToolCallStatusSettle />
                {remote && <remote.After />}
              </>
            ))}
        </div>
      </PartContext.Provider>
    );
  }),
);
ToolCallStatus.displayName = ROOT_NAME;

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusLabel
 * -----------------------------------------------------------------------------------------------*/

/**
 * The tool's name and the call's status in words (`Denied` for a call a person denied, "Outcome
 * unknown — check, then settle" for one held in doubt), and, for a call committed without its
 * run's own answer, on whose word: "(settled on evidence from the system it called)" or "(settled
 * by …)", the person named by `nameOf`. The action buttons point at it with `aria-describedby`.
 * Children replace the default text.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 * </ToolCallStatus>
 */
const LABEL_NAME = 'ToolCallStatusLabel';

export const ToolCallStatusLabel = forwardRef<
  HTMLSpanElement,
  ComponentPropsWithoutRef<'span'> & {
    /** Turns the principal who settled a call held in doubt into the words shown ("settled by …"). */
    readonly nameOf?: (principal: string) => string;
  }
>(function ToolCallStatusLabel({ children, nameOf, ...props }, ref) {
  const { call, labels, labelId } = usePart(LABEL_NAME);
  if (call === undefined) return null;
  return (
    <span data-toolgate="label" {...props} id={labelId} ref={ref}>
      {children ?? (
        <>
          <span data-toolgate="tool">{text(call.name) || wordFor(labels, 'unnamedTool')}</span>{' '}
          <span data-toolgate="state">
            {wordFor(
              labels,
              call.reason?.code === 'approval_denied' ? 'denied' : isHeld(call) ? 'held' : call.status,
            )}
          </span>
          <Evidence call={call} labels={labels} nameOf={nameOf} />
        </>
      )}
    </span>
  );
});
ToolCallStatusLabel.displayName = LABEL_NAME;

/** On whose word a committed call was settled, when its run's own answer was lost. */
function Evidence({
  call,
  labels,
  nameOf,
}: {
  readonly call: ToolCallRecord;
  readonly labels: Words;
  readonly nameOf: ((principal: string) => string) | undefined;
}): ReactNode {
  const evidence = call.status === 'committed' ? fieldsOf(call.evidence) : undefined;
  if (evidence === undefined) return null;
  const { source, by } = evidence;
  const words =
    source === 'person'
      ? fill(labels, 'evidencePerson', { by: personFor(labels, nameOf, by) })
      : wordFor(labels, 'evidenceDownstream');
  return (
    <>
      {' '}
      <span data-toolgate="evidence" data-source={text(source)}>
        ({words})
      </span>
    </>
  );
}

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusInput
 * -----------------------------------------------------------------------------------------------*/

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
const INPUT_NAME = 'ToolCallStatusInput';

export const ToolCallStatusInput = forwardRef<HTMLDivElement, ToolCallStatusInputProps>(
  function ToolCallStatusInput({ children, ...props }, ref) {
    const { call, setShown } = usePart(INPUT_NAME);
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
ToolCallStatusInput.displayName = INPUT_NAME;

function inputText(input: unknown): string {
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusReason
 * -----------------------------------------------------------------------------------------------*/

/**
 * Why a rejected, cancelled or failed call ended: each offending path and what is wrong with it
 * when the reason has issues, its message otherwise. Renders nothing for other statuses.
 * `data-code` carries the reason code.
 *
 * @example
 * <ToolCallStatusReason className="why" />
 */
const REASON_NAME = 'ToolCallStatusReason';

export const ToolCallStatusReason = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusReason({ children, ...props }, ref) {
    const { call, labels } = usePart(REASON_NAME);
    const reason = fieldsOf(call?.reason);
    if (reason === undefined) return null;
    const { code, message, issues } = reason;
    const whole = wordFor(labels, code === 'output_invalid' ? 'wholeOutput' : 'wholeArguments');
    return (
      <div data-toolgate="reason" data-code={text(code)} {...props} ref={ref}>
        {children ??
          (Array.isArray(issues) && issues.length > 0 ? (
            <ul>
              {issues.map((issue: unknown, i) => {
                const { path, message: says } = fieldsOf(issue) ?? {};
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
ToolCallStatusReason.displayName = REASON_NAME;

/* -------------------------------------------------------------------------------------------------
 * Parts that name people
 * -----------------------------------------------------------------------------------------------*/

/**
 * The props of a part that names people: a `div`'s, and `nameOf`, which turns a principal (as the
 * ledger records it) into the words the page shows; without it, or when it does not answer text,
 * the principal itself.
 *
 * @example
 * const props: NamedPartProps = { className: 'approvals', nameOf: (principal) => people[principal] ?? principal };
 */
export interface NamedPartProps extends ComponentPropsWithoutRef<'div'> {
  readonly nameOf?: (principal: string) => string;
}

/** A principal as the page shows it: `nameOf`'s text, else the principal; a throwing `nameOf` is the app's bug, and shows the principal rather than nothing. */
function nameFor(nameOf: ((principal: string) => string) | undefined, principal: string): string {
  if (nameOf === undefined) return principal;
  try {
    return text(nameOf(principal)) ?? principal;
  } catch {
    return principal;
  }
}

/** Who a record names, as the page shows them, or `somePerson` when it names nobody. */
function personFor(
  labels: Words,
  nameOf: ((principal: string) => string) | undefined,
  principal: unknown,
): string {
  return typeof principal === 'string' ? nameFor(nameOf, principal) : wordFor(labels, 'somePerson');
}

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusApprovals
 * -----------------------------------------------------------------------------------------------*/

/**
 * Who has approved a call that needs several approvers, how many are left, who of the people a
 * tool's `approvers` asked has yet to decide (while the call waits: the person chatting is often not
 * the one who may approve), and the budget that sent it to a person, when one did. Renders nothing
 * for a call without that state (one approver, no budget). `data-left` carries how many approvals
 * are still needed. The ledger knows people by their principal (`user_8f3a…`); `nameOf` says how
 * each reads on the page.
 *
 * @example
 * <ToolCallStatus id={id}>
 *   <ToolCallStatusLabel />
 *   <ToolCallStatusApprovals nameOf={(principal) => (principal === me ? 'you' : directory.name(principal))} />
 *   <ToolCallStatusActions />
 * </ToolCallStatus>
 */
const APPROVALS_NAME = 'ToolCallStatusApprovals';

// Its displayName is given in the call that makes it, so that an app that never renders it does not
// ship it (an assignment after the fact would keep it).
export const ToolCallStatusApprovals = /* @__PURE__ */ Object.assign(
  /* @__PURE__ */ forwardRef<HTMLDivElement, NamedPartProps>(function ToolCallStatusApprovals(
    { children, nameOf, ...props },
    ref,
  ) {
    const { call, labels } = usePart(APPROVALS_NAME);
    const approval = fieldsOf(call?.approval);
    if (approval === undefined) return null;
    const { required, left, approvedBy, overBudget, asked } = approval;
    const approvers = (Array.isArray(approvedBy) ? approvedBy : [])
      .map((entry: unknown) => text(fieldsOf(entry)?.principal))
      .filter((name) => name !== undefined);
    const names = approvers.map((principal) => nameFor(nameOf, principal));
    const waiting =
      call?.status === 'awaiting_approval' && Array.isArray(asked)
        ? asked
            .map(text)
            .filter(
              (principal): principal is string => principal !== undefined && !approvers.includes(principal),
            )
            .map((principal) => nameFor(nameOf, principal))
        : [];
    const over = text(fieldsOf(overBudget)?.message);
    const count = typeof left === 'number' ? left : undefined;
    return (
      <div data-toolgate="approvals" data-left={count} {...props} ref={ref}>
        {children ?? (
          <>
            {typeof required === 'number' && required > 1 && (
              <span data-toolgate="approvers">
                {names.length > 0
                  ? fill(labels, 'approvedBy', { names: names.join(', ') }, REMOTE_LABELS)
                  : wordFor(labels, 'noApprovals', REMOTE_LABELS)}
                {count !== undefined && count > 0
                  ? ` · ${fill(labels, 'approvalsLeft', { left: String(count), required: String(required) }, REMOTE_LABELS)}`
                  : ''}
              </span>
            )}
            {waiting.length > 0 && (
              <span data-toolgate="asked">
                {fill(labels, 'waitingFor', { names: waiting.join(', ') }, REMOTE_LABELS)}
              </span>
            )}
            {over !== undefined && (
              <span data-toolgate="over-budget">
                {fill(labels, 'overBudget', { message: over }, REMOTE_LABELS)}
              </span>
            )}
          </>
        )}
      </div>
    );
  }),
  { displayName: APPROVALS_NAME },
);

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusChanges
 * -----------------------------------------------------------------------------------------------*/

/**
 * What a person changed before approving: each value's path, the model's value and theirs, and who
 * changed it (`nameOf` says how a principal reads on the page). Renders nothing for a call nobody
 * edited.
 *
 * @example
 * <ToolCallStatusChanges className="diff" nameOf={(principal) => directory.name(principal)} />
 */
const CHANGES_NAME = 'ToolCallStatusChanges';

// Its displayName is given in the call that makes it, so that an app that never renders it does not
// ship it (an assignment after the fact would keep it).
export const ToolCallStatusChanges = /* @__PURE__ */ Object.assign(
  /* @__PURE__ */ forwardRef<HTMLDivElement, NamedPartProps>(function ToolCallStatusChanges(
    { children, nameOf, ...props },
    ref,
  ) {
    const { call, labels } = usePart(CHANGES_NAME);
    const edit = fieldsOf(call?.edit);
    if (edit === undefined) return null;
    const { by, changes } = edit;
    const shown = (value: unknown) =>
      value === undefined ? wordFor(labels, 'noValue', REMOTE_LABELS) : JSON.stringify(value);
    return (
      <div data-toolgate="changes" {...props} ref={ref}>
        {children ?? (
          <>
            <span>{fill(labels, 'changedBy', { by: personFor(labels, nameOf, by) }, REMOTE_LABELS)}</span>
            <ul>
              {(Array.isArray(changes) ? changes : []).map((change: unknown, i) => {
                const { path, from, to } = fieldsOf(change) ?? {};
                return (
                  <li key={i}>
                    <code>{text(path) || wordFor(labels, 'wholeInput', REMOTE_LABELS)}</code> {shown(from)} →{' '}
                    {shown(to)}
                  </li>
                );
              })}
            </ul>
          </>
        )}
      </div>
    );
  }),
  { displayName: CHANGES_NAME },
);

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusRefusal
 * -----------------------------------------------------------------------------------------------*/

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
const REFUSAL_NAME = 'ToolCallStatusRefusal';

// Its displayName is given in the call that makes it, so that an app that never renders it does not
// ship it (an assignment after the fact would keep it).
export const ToolCallStatusRefusal = /* @__PURE__ */ Object.assign(
  /* @__PURE__ */ forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(function ToolCallStatusRefusal(
    { children, ...props },
    ref,
  ) {
    const { request, labels } = usePart(REFUSAL_NAME);
    if (request?.state !== 'refused') return null;
    return (
      <div data-toolgate="refusal" data-code={request.error.code} {...props} ref={ref}>
        {children ??
          `${wordFor(labels, REFUSED[request.action], REMOTE_LABELS)}: ${refusalSentence(refusalsOf(labels), request.error)}`}
      </div>
    );
  }),
  { displayName: REFUSAL_NAME },
);

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusActions
 * -----------------------------------------------------------------------------------------------*/

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
const ACTIONS_NAME = 'ToolCallStatusActions';

export const ToolCallStatusActions = forwardRef<HTMLDivElement, ComponentPropsWithoutRef<'div'>>(
  function ToolCallStatusActions(props, ref) {
    const { call, request, controls, labels, labelId, root, shown, pressDelayMs } = usePart(ACTIONS_NAME);
    const connection = useConnection(useGate(ACTIONS_NAME), away);
    const live = connection === undefined;
    const Note = shownRemoteParts()?.Note;
    const status = call?.status;
    const inputShown = call?.input !== undefined && shown === call.input;
    // What Approve, Deny or Cancel acts on: a press waits again when any of it changes.
    const armed = useArmed(
      pressKey(status, isHeld(call), call?.input, inputShown, request?.state, request?.action),
      pressDelayMs,
    );
    const focus = useFocusCatch(root, pressKey(status, isHeld(call)));
    // A call held in doubt is ended only by a commit or a run again: its settle form offers both.
    if ((status !== 'awaiting_approval' && status !== 'executing') || isHeld(call)) return null;
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
          focus.onFocus();
          props.onFocus?.(event);
        }}
        onBlur={(event) => {
          focus.onBlur(event);
          props.onBlur?.(event);
        }}
      >
        {connection === undefined || Note === undefined ? null : (
          <Note connection={connection} labels={labels} />
        )}
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
ToolCallStatusActions.displayName = ACTIONS_NAME;

/* -------------------------------------------------------------------------------------------------
 * ToolCallStatusEdit
 * -----------------------------------------------------------------------------------------------*/

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
const EDIT_NAME = 'ToolCallStatusEdit';

export function ToolCallStatusEdit({
  children,
}: {
  readonly children: (editor: ToolCallEditor) => ReactNode;
}): ReactNode {
  const { call, controls } = usePart(EDIT_NAME);
  if (call?.status !== 'awaiting_approval') return null;
  return children({ input: call.input, approve: controls.approveEdited });
}
