import { isTerminal, type ToolCallRecord } from '@toolgate/core';
import { shownInputHash } from '@toolgate/core/kit';
import type { ChatState } from './chat-state.ts';
import type { ToolgateRefusal } from './data-part.ts';
import { outcomeTextOf } from './outcome-error.ts';

type Part = Record<string, unknown>;

/** A tool part as useChat sends it, read defensively: anything in it may have been written by the client. */
interface ToolPart {
  readonly part: Part;
  readonly id: string;
  /** What the client says the person answered, if it says anything. */
  readonly answer:
    { readonly approved: boolean; readonly reason?: string; readonly approvalId?: string } | undefined;
  /** The client shows the person's answer waiting for the server (`approval-responded`). */
  readonly responded: boolean;
}

/**
 * Applies the approval responses the history carries, then answers it with every tool part as the
 * ledger has it. See `ToolgateChat.messages`.
 */
export async function answerHistory(state: ChatState, messages: unknown): Promise<unknown[]> {
  if (!Array.isArray(messages)) {
    throw new TypeError(
      "chat.messages: pass the UI messages useChat sent (the request body's `messages` array).",
    );
  }
  if (messages.some(signsApprovals)) throw new TypeError(APPROVAL_SECRET);
  let ledger = await state.view.calls();
  const refusals = await applyAnswers(state, messages, ledger);
  if (refusals.decided) ledger = await state.view.calls();
  for (const record of ledger.values()) state.known.set(record.id, record);
  for (const id of refusals.decidedIds) {
    const record = ledger.get(id);
    if (record !== undefined) state.emit(record, refusals.byId.get(id));
  }
  // A refused answer leaves useChat's part answered; put it back to asking, so the page offers
  // Approve and Deny again and the answer is not sent again with the person's next message.
  for (const id of refusals.askAgain) if (ledger.get(id)?.status === 'awaiting_approval') state.askAgain(id);
  catchUp(state, messages, ledger, new Set(refusals.decidedIds));

  const lastIndex = messages.length - 1;
  const answered: unknown[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isAssistant(message)) {
      answered.push(message);
      continue;
    }
    const parts = message['parts'] as unknown[];
    const finalFrom = index === lastIndex ? lastStepStart(parts) : Number.POSITIVE_INFINITY;
    const next: Part[] = [];
    for (const [at, raw] of parts.entries()) {
      const place = at >= finalFrom ? 'final' : index === lastIndex ? 'continued' : 'earlier';
      const part = answerPart(state, raw, ledger, place, refusals.byId);
      if (part === undefined) continue;
      next.push(await part);
    }
    answered.push({ ...message, parts: next });
  }
  state.history = answered;
  return answered;
}

/** Why a history whose approvals the SDK signed is refused before anything in it is applied. */
const APPROVAL_SECRET =
  'chat.messages: streamText signs tool approvals here (experimental_toolApprovalSecret is set). ' +
  'Remove experimental_toolApprovalSecret from streamText: the ledger already binds each approval to the ' +
  'input the person saw and runs it once, and the SDK would refuse every approval toolgate answers ' +
  '("missing signature"). Nothing was applied.';

/** A message with a tool part whose approval the SDK signed: only an approval secret makes it do that. */
function signsApprovals(message: unknown): boolean {
  if (!isAssistant(message)) return false;
  return (message['parts'] as unknown[]).some(
    (part) =>
      readToolPart(part) !== undefined &&
      isRecord(part) &&
      isRecord(part['approval']) &&
      typeof part['approval']['signature'] === 'string',
  );
}

/**
 * Sends the page the record of each call of the history that moved since the page's last
 * `data-toolgate` part of it (it ended while nobody was streaming: interrupted by a restart,
 * approved in another tab), so its status is the ledger's, not the last one it saw.
 */
function catchUp(
  state: ChatState,
  messages: unknown[],
  ledger: Map<string, ToolCallRecord>,
  sent: ReadonlySet<string>,
): void {
  const shown = new Map<string, unknown>();
  const named = new Set<string>();
  for (const message of messages) {
    if (!isAssistant(message)) continue;
    for (const raw of message['parts'] as unknown[]) {
      const tool = readToolPart(raw);
      if (tool !== undefined) named.add(tool.id);
      if (
        isRecord(raw) &&
        raw['type'] === 'data-toolgate' &&
        typeof raw['id'] === 'string' &&
        isRecord(raw['data']) &&
        isRecord(raw['data']['record'])
      ) {
        shown.set(raw['id'], raw['data']['record']['status']);
      }
    }
  }
  for (const id of named) {
    const record = ledger.get(id);
    if (record !== undefined && !sent.has(id) && shown.get(id) !== record.status) state.emit(record);
  }
}

interface Answers {
  readonly decided: boolean;
  readonly decidedIds: string[];
  readonly byId: Map<string, ToolgateRefusal>;
  /** Calls whose part, in the message this response continues, carries an answer the ledger refused. */
  readonly askAgain: string[];
}

/**
 * Gives the ledger each answer a person gave to a call that waits for one, bound to the input the
 * part shows. An answer the ledger refused before (a `data-toolgate` refusal names its approval id)
 * is not given again: only a new press, which carries a new approval id, is.
 */
async function applyAnswers(
  state: ChatState,
  messages: unknown[],
  ledger: Map<string, ToolCallRecord>,
): Promise<Answers> {
  const decidedIds: string[] = [];
  const byId = new Map<string, ToolgateRefusal>();
  const refusedBefore = refusedApprovals(messages);
  const last = messages.at(-1);
  const askAgain: string[] = [];
  for (const message of messages) {
    if (!isAssistant(message)) continue;
    for (const raw of message['parts'] as unknown[]) {
      const tool = readToolPart(raw);
      if (tool?.answer === undefined || decidedIds.includes(tool.id)) continue;
      if (ledger.get(tool.id)?.status !== 'awaiting_approval') continue;
      const continued = message === last && tool.responded;
      if (tool.answer.approvalId !== undefined && refusedBefore.has(tool.answer.approvalId)) {
        if (continued) askAgain.push(tool.id);
        continue;
      }
      decidedIds.push(tool.id);
      const { principal } = state;
      const definition = state.gate.tools.find((candidate) => candidate.name === ledger.get(tool.id)?.name);
      const decision = tool.answer.approved
        ? await state.gate.approve(tool.id, {
            principal,
            inputHash: await shownInputHash(definition, tool.part['input']),
          })
        : await state.gate.deny(
            tool.id,
            tool.answer.reason === undefined ? { principal } : { principal, reason: tool.answer.reason },
          );
      if (decision.ok) continue;
      byId.set(tool.id, {
        action: tool.answer.approved ? 'approve' : 'deny',
        code: decision.code,
        message: decision.message,
        ...(tool.answer.approvalId === undefined ? {} : { approvalId: tool.answer.approvalId }),
      });
      if (continued) askAgain.push(tool.id);
    }
  }
  return { decided: decidedIds.length > 0, decidedIds, byId, askAgain };
}

/** The approval ids of the answers the ledger refused, as the history's `data-toolgate` parts name them. */
function refusedApprovals(messages: unknown[]): Set<string> {
  const refused = new Set<string>();
  for (const message of messages) {
    if (!isAssistant(message)) continue;
    for (const raw of message['parts'] as unknown[]) {
      if (!isRecord(raw) || raw['type'] !== 'data-toolgate' || !isRecord(raw['data'])) continue;
      const refusal = raw['data']['refusal'];
      if (isRecord(refusal) && typeof refusal['approvalId'] === 'string') refused.add(refusal['approvalId']);
    }
  }
  return refused;
}

/**
 * One part of an assistant message as the ledger has it. Tool parts of calls the session does not
 * hold are left out, whatever they claim; `data-toolgate` parts carry the ledger's current record.
 */
/**
 * Where a part stands in the history: in the last step of the message this response continues
 * (the SDK streams the outcome of an answer handed back to it there), elsewhere in that message,
 * or in an earlier message.
 */
type Place = 'final' | 'continued' | 'earlier';

function answerPart(
  state: ChatState,
  raw: unknown,
  ledger: Map<string, ToolCallRecord>,
  place: Place,
  refusals: Map<string, ToolgateRefusal>,
): Promise<Part> | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw['type'] === 'data-toolgate') {
    const record = typeof raw['id'] === 'string' ? ledger.get(raw['id']) : undefined;
    return record === undefined
      ? undefined
      : Promise.resolve({ type: 'data-toolgate', id: record.id, data: { record } });
  }
  if (!isToolType(raw['type'])) return Promise.resolve(raw);
  const tool = readToolPart(raw);
  const record = tool === undefined ? undefined : ledger.get(tool.id);
  if (tool === undefined || record === undefined) return undefined;
  return answerToolPart(state, tool, record, place, refusals.get(tool.id));
}

async function answerToolPart(
  state: ChatState,
  tool: ToolPart,
  record: ToolCallRecord,
  place: Place,
  refusal: ToolgateRefusal | undefined,
): Promise<Part> {
  const head: Part = { ...typeOf(state, record), toolCallId: record.id };
  const metadata = tool.part['callProviderMetadata'];
  if (isRecord(metadata)) head['callProviderMetadata'] = metadata;
  const approvalId = tool.answer?.approvalId ?? `toolgate-${record.id}`;
  const input = record.input ?? {};
  const asked = record.history.some((step) => step.status === 'awaiting_approval');

  // The last step's answers go back to the SDK as answers, so that it streams their outcome into the
  // page's tool part (approved: `execute` returns what the ledger ran; denied: `output-denied`).
  if (place === 'final' && asked && tool.responded && tool.answer !== undefined) {
    const ran = record.history.some((step) => step.status === 'executing');
    const denied = record.status === 'cancelled' && record.reason.code === 'approval_denied';
    if (tool.answer.approved && ran) {
      state.approved.add(record.id);
      return { ...head, state: 'approval-responded', input, approval: { id: approvalId, approved: true } };
    }
    if (!tool.answer.approved && denied) {
      return {
        ...head,
        state: 'approval-responded',
        input,
        approval: { id: approvalId, approved: false, reason: record.reason.message },
      };
    }
  }

  let now = record;
  if (now.status === 'executing' || now.status === 'validated') {
    now = (await state.view.settled(now.id)) ?? now;
    state.known.set(now.id, now);
  }
  // An answered part the SDK will not move (an answer given again after a refusal sits in an
  // earlier step): the page's part shows the ledger's outcome all the same.
  if (place !== 'earlier' && tool.responded && isTerminal(now.status)) state.showOutcome(now);
  switch (now.status) {
    case 'committed':
      return { ...head, state: 'output-available', input: now.input, output: now.output };
    case 'cancelled':
      if (now.reason.code === 'approval_denied') {
        return {
          ...head,
          state: 'output-denied',
          input,
          approval: { id: approvalId, approved: false, reason: now.reason.message },
        };
      }
      return { ...head, state: 'output-error', input, errorText: outcomeTextOf(now) };
    case 'awaiting_approval':
      return { ...head, state: 'output-error', input, errorText: waitingText(now, refusal) };
    default:
      return { ...head, state: 'output-error', input, errorText: outcomeTextOf(now) };
  }
}

function waitingText(record: ToolCallRecord, refusal: ToolgateRefusal | undefined): string {
  const text = outcomeTextOf(record);
  if (refusal === undefined) return text;
  return `${text} The user's last answer was refused (${refusal.code}): ${refusal.message}.`;
}

/** `tool-<name>` for a tool the chat has; a `dynamic-tool` part otherwise. */
function typeOf(state: ChatState, record: ToolCallRecord): Part {
  const known = state.gate.tools.some((tool) => tool.name === record.name);
  return known ? { type: `tool-${record.name}` } : { type: 'dynamic-tool', toolName: record.name };
}

function readToolPart(raw: unknown): ToolPart | undefined {
  if (!isRecord(raw) || !isToolType(raw['type'])) return undefined;
  const id = raw['toolCallId'];
  if (typeof id !== 'string' || id === '') return undefined;
  const approval = raw['approval'];
  let answer: ToolPart['answer'];
  if (isRecord(approval) && typeof approval['approved'] === 'boolean') {
    answer = {
      approved: approval['approved'],
      ...(typeof approval['reason'] === 'string' ? { reason: approval['reason'] } : {}),
      ...(typeof approval['id'] === 'string' && approval['id'] !== '' ? { approvalId: approval['id'] } : {}),
    };
  }
  return { part: raw, id, answer, responded: raw['state'] === 'approval-responded' };
}

function isToolType(type: unknown): boolean {
  return typeof type === 'string' && (type.startsWith('tool-') || type === 'dynamic-tool');
}

/** Where the last step of a message begins: its last `step-start` part, or the start. */
function lastStepStart(parts: unknown[]): number {
  for (let at = parts.length - 1; at >= 0; at--) {
    const part = parts[at];
    if (isRecord(part) && part['type'] === 'step-start') return at;
  }
  return 0;
}

function isAssistant(message: unknown): message is Part {
  return isRecord(message) && message['role'] === 'assistant' && Array.isArray(message['parts']);
}

function isRecord(value: unknown): value is Part {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
