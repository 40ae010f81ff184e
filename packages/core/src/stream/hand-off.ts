import { PARALLEL_WRAPPER, readParallelWrapper } from '../proposal/parallel-wrapper.ts';
import type { StreamRefusal } from '../gate/stream-gate.ts';
import type { Reason } from '../record/record.ts';
import { argumentsOf, type Slot } from './slot.ts';
import type { StreamTurn } from './stream-turn.ts';

/**
 * Opens a named call in the gate as `pending`, tagged with the turn.
 *
 * @example
 * const id = openInGate(turn, slot, 'write_file');
 */
export function openInGate(turn: StreamTurn, slot: Slot, name: string): string {
  const record = turn.gate.stream.open({
    ...(slot.providerId === undefined ? {} : { id: slot.providerId }),
    name,
    source: turn.source,
    ...(turn.id === undefined ? {} : { turn: turn.id }),
  });
  slot.callIds = [record.id];
  slot.generatedId = record.generatedId;
  if (slot.phase === 'naming') slot.phase = 'open';
  return record.id;
}

/**
 * Hands a call's arguments to the gate, which checks them and goes on as `propose` would. A call
 * that never got a name is proposed anyway, so the gate rejects it and its id is still answered;
 * a `multi_tool_use.parallel` wrapper is unwrapped when every tool it names has opted in.
 *
 * @example
 * close(turn, slot); // the arguments as the model sent them
 */
export function close(turn: StreamTurn, slot: Slot, raw: unknown = argumentsOf(slot)): void {
  if (slot.phase === 'closed') return;
  const { gate } = turn;
  shut(turn, slot);
  const name = slot.name;
  if (name === undefined) {
    const record = gate.propose(
      { id: slot.providerId, arguments: raw },
      turn.id === undefined ? {} : { turn: turn.id },
    );
    slot.callIds = [record.id];
    slot.generatedId = record.generatedId;
    return;
  }
  if (name === PARALLEL_WRAPPER && unwrap(turn, slot, raw)) return;
  const id = slot.callIds[0] ?? openInGate(turn, slot, name);
  gate.stream.close(id, raw);
}

/** Proposes the calls inside a wrapper, when every tool they name has opted in. */
function unwrap(turn: StreamTurn, slot: Slot, raw: unknown): boolean {
  const { gate } = turn;
  const read = readParallelWrapper(raw, gate.limits);
  if (!read.ok) return false;
  const tools = new Map(gate.tools.map((tool) => [tool.name, tool]));
  if (!read.calls.every((call) => tools.get(call.name)?.repair?.includes('parallel_wrapper') === true))
    return false;
  const wrapperId = slot.providerId ?? `${PARALLEL_WRAPPER}@${slot.position}`;
  slot.providerId = wrapperId;
  slot.callIds = read.calls.map((call, index) => {
    const repairs = [
      {
        kind: 'parallel_wrapper',
        path: '',
        message: `unwrapped call ${index + 1} of ${read.calls.length} from the ${PARALLEL_WRAPPER} call ${wrapperId}`,
      },
    ];
    const record = gate.propose(
      { id: `${wrapperId}#${index + 1}`, name: call.name, arguments: call.arguments },
      turn.id === undefined ? { repairs } : { turn: turn.id, repairs },
    );
    return record.id;
  });
  return true;
}

/**
 * The provider cut the call off: the gate rejects it as `truncated` with this message.
 *
 * @example
 * truncate(turn, slot, outputCutOff('stop_reason "max_tokens"'));
 */
export function truncate(turn: StreamTurn, slot: Slot, message: string): void {
  const id = takeOver(turn, slot);
  if (id !== undefined) turn.gate.stream.truncate(id, message);
}

/**
 * The stream says something about the call that no JSON value can be: the gate rejects it now.
 *
 * @example
 * refuse(turn, slot, { code: 'invalid_shape', message: 'partialArgs path $.items[-1] names no place in a JSON value' });
 */
export function refuse(turn: StreamTurn, slot: Slot, reason: Reason<StreamRefusal>): void {
  const id = takeOver(turn, slot);
  if (id !== undefined) turn.gate.stream.refuse(id, reason);
}

/**
 * The turn was stopped: the gate cancels the call (`user_cancelled`) with this reason.
 *
 * @example
 * cancelOpen(turn, slot, 'the stream was aborted');
 */
export function cancelOpen(turn: StreamTurn, slot: Slot, reason: string): void {
  const id = takeOver(turn, slot);
  if (id !== undefined) turn.gate.cancel(id, reason);
}

/** Closes a call that is not closed yet, opening it in the gate first if need be; its id, or `undefined` when it was closed. */
function takeOver(turn: StreamTurn, slot: Slot): string | undefined {
  if (slot.phase === 'closed') return undefined;
  turn.previews.clear(slot);
  const id = slot.callIds[0] ?? openInGate(turn, slot, slot.name ?? '');
  shut(turn, slot);
  return id;
}

function shut(turn: StreamTurn, slot: Slot): void {
  turn.previews.clear(slot);
  slot.phase = 'closed';
  slot.json = undefined;
}
