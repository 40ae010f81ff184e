import { isTerminal, type ToolCallRecord } from '../record/record.ts';
import type { FeedReader } from './feed-reader.ts';
import type { Mirror } from './mirror.ts';
import { readMove, readSnapshot, type WireReading } from './wire.ts';

/**
 * Whether a call waits for this principal's decision: it awaits approval, asks them, and they have
 * not approved the input it holds (an approver of a quorum who approved is no longer asked).
 *
 * @example
 * const mine = [...gate.calls.getState().records.values()].filter((call) => waitsFor(call, 'manager_1'));
 */
export function waitsFor(call: ToolCallRecord, principal: string): boolean {
  const approval = call.approval;
  return (
    call.status === 'awaiting_approval' &&
    approval?.asked?.includes(principal) === true &&
    !approval.approvedBy.some((vote) => vote.principal === principal)
  );
}

/**
 * Reads a principal's inbox feed (`GET {base}/approvals/events`) into a remote gate's mirror: the
 * snapshot names whose inbox it is and the calls in it; each later move of a call that asks them
 * keeps the call while it still waits for them, and takes it out once it does not (they approved,
 * someone decided, it expired). Feed data is untrusted: a message that is not well formed is
 * dropped and reported, and the next good one is read.
 *
 * @example
 * const reader = createInboxReader({ mirror, onError });
 * openEventFeed({ ...options, url: `${base}/approvals/events`, resumeAfter: reader.seq, onMessage: reader.receive });
 */
export function createInboxReader({
  mirror,
  onError,
}: {
  readonly mirror: Mirror;
  readonly onError: (error: unknown) => void;
}): FeedReader {
  let seq: number | undefined;
  let principal: string | undefined;

  const drop = (problem: string, id: string | undefined) =>
    onError(new Error(`toolgate inbox: dropped a feed message${id ? ` (id ${id})` : ''}: ${problem}.`));

  function keep(call: ToolCallRecord): boolean {
    if (principal !== undefined && waitsFor(call, principal)) {
      mirror.put(call);
      return true;
    }
    if (mirror.get(call.id) === undefined) return false;
    // A call that ended settles whoever waits for it before it leaves.
    if (isTerminal(call.status)) mirror.put(call);
    mirror.remove(call.id);
    return true;
  }

  function snapshot(
    value: Record<string, unknown>,
    reading: WireReading<{ seq: number; calls: readonly ToolCallRecord[] }>,
  ): void {
    if (!reading.ok) return;
    const { seq: at, calls } = reading.value;
    if (seq !== undefined && at < seq) return;
    const whose = value['principal'];
    if (typeof whose !== 'string' || whose === '')
      return drop(`snapshot ${at} does not name whose inbox it is`, String(at));
    seq = at;
    principal = whose;
    const changed = [...mirror.ids()];
    mirror.clear();
    for (const call of calls) if (keep(call) && !changed.includes(call.id)) changed.push(call.id);
    mirror.publish(changed);
  }

  function receive({ event: name, id, data }: Parameters<FeedReader['receive']>[0]): void {
    if (name !== 'snapshot' && name !== 'move') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return drop(`its ${name} data is not JSON`, id);
    }
    if (name === 'snapshot') {
      const reading = readSnapshot(parsed);
      if (!reading.ok) return drop(reading.problem, id);
      for (const problem of reading.problems) drop(problem, id);
      return snapshot(parsed as Record<string, unknown>, reading);
    }
    const reading = readMove(parsed);
    if (!reading.ok) return drop(reading.problem, id);
    const { event, record } = reading.value;
    // Sent again after a reconnect, or before the snapshot that says whose inbox this is.
    if (seq === undefined || event.seq <= seq) return;
    seq = event.seq;
    if (keep(record)) mirror.publish([record.id]);
  }

  return { receive, seq: () => seq };
}
