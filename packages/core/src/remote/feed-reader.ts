import { isTerminal, type Reason } from '../record/record.ts';
import type { AuditEvent, AuditWriter } from '../gate/audit.ts';
import type { LiveCommit } from './live-commit.ts';
import type { Mirror } from './mirror.ts';
import { readMove, readSnapshot, type FeedMove, type FeedSnapshot, type WireReading } from './wire.ts';

/**
 * Reads a session's event feed into a remote gate's mirror: the first snapshot as the page found
 * things, then each move once, in order. Feed data is untrusted: a message that is not well formed,
 * not about this session, or that would move a settled call is dropped and reported, and the next
 * good one is read. The app's store is written (through `liveCommit`) only for a commit that
 * arrives after the first snapshot, once per call.
 *
 * @example
 * const reader = createFeedReader({ session, mirror, liveCommit, audit, onError });
 * openEventFeed({ ...options, resumeAfter: reader.seq, onMessage: reader.receive });
 */
export interface FeedReader {
  /** Reads one message of the feed (`snapshot` and `move`; other kinds are for other readers). */
  readonly receive: (message: {
    readonly event?: string | undefined;
    readonly id?: string | undefined;
    readonly data: string;
  }) => void;
  /** The last ledger event read, to resume after; `undefined` until the first snapshot. */
  readonly seq: () => number | undefined;
}

/**
 * What a feed reader writes to.
 *
 * @example
 * const init: FeedReaderInit = { session: 'chat_1', mirror, liveCommit, audit, onError: console.error };
 */
export interface FeedReaderInit {
  readonly session: string;
  readonly mirror: Mirror;
  readonly liveCommit: LiveCommit;
  readonly audit: AuditWriter;
  /** Receives each dropped message, as an `Error` that says why. */
  readonly onError: (error: unknown) => void;
}

/**
 * Events that move no status but carry a changed record: one approval of several, a person's edit,
 * a running call held in doubt or run again, a committed call's compensation, more principals asked.
 */
const RECORD_NOTES: ReadonlySet<string> = new Set([
  'approved',
  'edited',
  'held',
  'run_again',
  'compensation',
  'escalated',
]);

/**
 * Creates the reader of one session's feed, before its first snapshot.
 *
 * @example
 * const reader = createFeedReader({ session, mirror, liveCommit, audit, onError });
 * reader.receive({ event: 'snapshot', id: '0', data: '{"seq":0,"calls":[]}' });
 */
export function createFeedReader(init: FeedReaderInit): FeedReader {
  const { session, mirror, liveCommit, audit, onError } = init;
  let seq: number | undefined;

  function applySnapshot(snapshot: FeedSnapshot): void {
    // An older snapshot than what the page has would move calls back.
    if (seq !== undefined && snapshot.seq < seq) return;
    const first = seq === undefined;
    seq = snapshot.seq;
    const changed = first ? [] : [...mirror.ids()];
    if (!first) mirror.clear();
    for (const record of snapshot.calls) {
      // The page loaded what committed before it opened the feed; after that, a fresh snapshot
      // (a server that could not resume) still carries calls that committed while it was away.
      if (record.status === 'committed' && first) liveCommit.known(record.id);
      else if (record.status === 'committed') liveCommit.commit(record);
      mirror.put(record);
      if (!changed.includes(record.id)) changed.push(record.id);
    }
    mirror.publish(changed);
  }

  function applyMove({ event, record }: FeedMove): void {
    if (seq !== undefined && event.seq <= seq) return; // sent again after a reconnect
    if (event.session !== session) {
      onError(
        new Error(
          `toolgate remote: dropped event ${event.seq}: it is about session "${event.session}", not "${session}".`,
        ),
      );
      return;
    }
    const current = mirror.get(record.id);
    const refusal = event.from === event.to && event.reason !== undefined;
    if (!refusal && current !== undefined && isTerminal(current.status) && current.status !== record.status) {
      onError(
        new Error(
          `toolgate remote: dropped event ${event.seq}: call "${record.id}" is ${current.status}, and a settled call never moves again.`,
        ),
      );
      return;
    }
    seq = event.seq;
    audit.record(auditEventOf(event, record.name));
    // A refusal leaves the call as it was; an approval of several, or an edit, changes the record only.
    if (refusal && current !== undefined && !RECORD_NOTES.has(event.reason?.code ?? '')) return;
    if (record.status === 'committed') liveCommit.commit(record);
    mirror.put(record);
    mirror.publish([record.id]);
  }

  const drop = (problem: string, id: string | undefined) =>
    onError(new Error(`toolgate remote: dropped a feed message${id ? ` (id ${id})` : ''}: ${problem}.`));

  function receive({
    event: name,
    id,
    data,
  }: {
    readonly event?: string | undefined;
    readonly id?: string | undefined;
    readonly data: string;
  }): void {
    if (name !== 'snapshot' && name !== 'move') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      drop(`its ${name} data is not JSON`, id);
      return;
    }
    const reading: WireReading<FeedSnapshot | FeedMove> =
      name === 'snapshot' ? readSnapshot(parsed) : readMove(parsed);
    if (!reading.ok) {
      drop(reading.problem, id);
      return;
    }
    for (const problem of reading.problems) drop(problem, id);
    const messageSeq = 'seq' in reading.value ? reading.value.seq : reading.value.event.seq;
    if (id !== undefined && id !== '' && id !== String(messageSeq)) {
      drop(`its id ${JSON.stringify(id)} is not its sequence number ${messageSeq}`, id);
      return;
    }
    if ('seq' in reading.value) applySnapshot(reading.value);
    else applyMove(reading.value);
  }

  return { receive, seq: () => seq };
}

/** A ledger event as the audit log's event: the same move, with the tool's name. */
function auditEventOf(event: FeedMove['event'], name: string): AuditEvent {
  const move = { callId: event.callId, name, from: event.from, to: event.to, at: event.at };
  // Refusal codes (stale, forbidden, …) are the server's; they are kept as sent.
  return event.reason === undefined ? move : { ...move, reason: event.reason as Reason };
}
