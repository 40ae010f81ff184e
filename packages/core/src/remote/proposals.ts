import type { Clock } from '../call/clock.ts';
import type { ProposalSource, Reason, RejectedCall, ToolCallRecord } from '../record/record.ts';
import type { StreamOpen } from '../gate/stream-gate.ts';
import { DEFAULT_LIMITS } from '../proposal/limits.ts';
import { readProposal } from '../proposal/proposal.ts';

/**
 * What a remote gate answers to a proposal: calls are proposed where the model runs, on the
 * server. For an id the feed has delivered, the mirrored record; otherwise a `rejected` record
 * (code `unauthorized`) that says so. It is not stored, so `useToolCall(part)` shows the call as
 * soon as the server's record arrives. Never throws, whatever it is given.
 *
 * @example
 * const proposals = createRemoteProposals(clock, mirror.get);
 * proposals.propose(toolCall).status; // 'rejected' until the server's record arrives
 */
export interface RemoteProposals {
  readonly propose: (
    input: unknown,
    options?: { readonly id?: string; readonly turn?: string },
  ) => ToolCallRecord;
  /** `gate.stream.open`: the same answer for a streamed call. */
  readonly open: (init: StreamOpen) => ToolCallRecord;
}

const NOT_HERE =
  "this page mirrors a server gate and proposes no calls: the server proposes them (serverGate.propose), and the page shows each one once the server's event feed has it";

/**
 * Creates a remote gate's answers to proposals.
 *
 * @example
 * const proposals = createRemoteProposals(systemClock, (id) => records.get(id));
 */
export function createRemoteProposals(
  clock: Clock,
  get: (id: string) => ToolCallRecord | undefined,
): RemoteProposals {
  let localIds = 0;

  function notProposedHere(
    id: string | undefined,
    name: string,
    source: ProposalSource,
    turn: string | undefined,
  ): RejectedCall<unknown> {
    const at = clock.now();
    const reason: Reason<'unauthorized'> = { code: 'unauthorized', message: NOT_HERE };
    return {
      id: id ?? `remote_${++localIds}`,
      name,
      source,
      generatedId: id === undefined,
      turn,
      createdAt: at,
      updatedAt: at,
      status: 'rejected',
      history: [
        { status: 'pending', at },
        { status: 'rejected', at, reason },
      ],
      input: undefined,
      output: undefined,
      reason,
      preview: undefined,
      repairs: undefined,
      evicted: false,
    };
  }

  return {
    propose(input, options) {
      let reading: ReturnType<typeof readProposal> | undefined;
      try {
        reading = readProposal(input, DEFAULT_LIMITS);
      } catch {
        reading = undefined; // a hostile object: still an answer, never a throw
      }
      const id =
        options?.id ?? (reading === undefined ? undefined : reading.ok ? reading.proposal.id : reading.id);
      const known = id === undefined ? undefined : get(id);
      if (known !== undefined) return known;
      const name = reading === undefined ? '' : reading.ok ? reading.proposal.name : (reading.name ?? '');
      return notProposedHere(
        id,
        name,
        reading?.ok ? reading.proposal.source : (reading?.source ?? 'normalised'),
        options?.turn,
      );
    },
    open: (init) => get(init.id ?? '') ?? notProposedHere(init.id, init.name, init.source, init.turn),
  };
}
