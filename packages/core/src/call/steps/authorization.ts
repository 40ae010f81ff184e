import { after } from '../maybe-promise.ts';
import type { MoveNote, PipelineHost } from '../pipeline-host.ts';
import type { ToolCallRecord } from '../../record/record.ts';
import { messageOf, textOf } from '../../record/text.ts';
import type { ToolDefinition } from '../../tool/tool.ts';
import type { ToolEntry } from '../../tool/tool-entry.ts';
import type { Moves } from './moves.ts';

/**
 * The step after validation: the app's `authorize` decides whether the call may run at all, then
 * `needsApproval` whether a person must approve it first; anything but a clear answer from either
 * refuses the call as `unauthorized`.
 *
 * @example
 * const authorize = createAuthorization(host, moves, execute);
 * authorize(validatedCall, note);
 */
export type Authorization = (call: ToolCallRecord, note: MoveNote) => void;

/**
 * Creates the step; `execute` gets each call that may run now without a person.
 *
 * @example
 * const authorize = createAuthorization(host, moves, (id, note) => execute(id, note));
 */
export function createAuthorization(
  host: PipelineHost,
  moves: Moves,
  execute: (id: string, note: MoveNote) => void,
): Authorization {
  const { reject } = moves;

  /** What `needsApproval` answered: only a definite `false` (or no `needsApproval`) skips the person. */
  function answered(id: string, value: unknown, note: MoveNote): void {
    if (value === true) moves.move(id, { type: 'await_approval' }, note);
    else if (value === false) execute(id, note);
    else
      reject(
        id,
        {
          code: 'unauthorized',
          message: `needsApproval answered ${describeAnswer(value)}; it must answer true or false`,
        },
        note,
      );
  }

  /** Asks a person, or runs the call. */
  function ask(id: string, entry: ToolEntry, input: unknown, note: MoveNote): void {
    const { needsApproval } = entry.tool;
    // A tool that says once and for all (or not at all) is answered at once.
    if (needsApproval === undefined || typeof needsApproval === 'boolean') {
      answered(id, needsApproval ?? false, note);
      return;
    }
    const refuse = (error: unknown) =>
      reject(id, { code: 'unauthorized', message: `needsApproval threw: ${messageOf(error)}` }, note);
    let answer: unknown;
    try {
      answer = typeof needsApproval === 'function' ? needsApproval(input) : needsApproval;
    } catch (error) {
      refuse(error);
      return;
    }
    after(answer, (value) => answered(id, value, note), refuse);
  }

  return function authorize(call, note) {
    if (call.status !== 'validated') return;
    const entry = host.entry(call.name, call.id);
    if (entry === undefined) return;
    const { tool } = entry;
    const { id, input } = call;
    if (tool.authorize === undefined) {
      ask(id, entry, input, note);
      return;
    }
    const refuse = (error: unknown) =>
      reject(id, { code: 'unauthorized', message: `authorize threw: ${messageOf(error)}` }, note);
    let verdict: unknown;
    try {
      verdict = tool.authorize(input, { call: { id, name: tool.name }, state: host.state() });
    } catch (error) {
      refuse(error);
      return;
    }
    after(
      verdict,
      (answer) => {
        if (answer === true) ask(id, entry, input, note);
        else
          reject(
            id,
            {
              code: 'unauthorized',
              message:
                typeof answer === 'string' && answer !== '' ? answer : 'the app did not authorize this call',
            },
            note,
          );
      },
      refuse,
    );
  };
}

/**
 * Whether a tool's calls run with no one asked: no `authorize`, and a `needsApproval` that is
 * absent or `false`. Such a call goes from `validated` to `executing` with no app code between.
 *
 * @example
 * if (asksNoOne(entry.tool)) moves.validateAndExecute(id, event, note, go);
 */
export function asksNoOne(tool: ToolDefinition): boolean {
  return tool.authorize === undefined && (tool.needsApproval === undefined || tool.needsApproval === false);
}

function describeAnswer(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : textOf(value);
}
