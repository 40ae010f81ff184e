import { createPartialJson, type PartialJson } from './partial-json.ts';

/**
 * Where a streamed call is: waiting for its name; open (arguments arriving); ended (the provider
 * said the arguments are done but they are not whole JSON, so the turn's stop reason decides
 * between `truncated` and the gate's own reason); closed (handed to the gate).
 */
export type Phase = 'naming' | 'open' | 'ended' | 'closed';

/**
 * One streamed call of a turn, as its arguments arrive: the fragments, what the previewer has
 * read of them, and the gate's ids for it once it is open.
 *
 * @example
 * const slot = createSlot('0', 0, 0, 64);
 * appendFragment(slot, '{"q":');
 */
export interface Slot {
  readonly key: string;
  readonly order: number;
  position: number;
  providerId: string | undefined;
  name: string | undefined;
  phase: Phase;
  /** The argument fragments so far (joined when the call closes: one copy, not one per fragment). */
  parts: string[];
  length: number;
  /** How many of `parts` the previewer has read: it reads them when a preview or a decision needs it. */
  parsed: number;
  json: PartialJson | undefined;
  /** Arguments the provider gave whole (a final string, or an object), which win over the fragments. */
  whole: { readonly value: unknown } | undefined;
  /** The gate's ids for this call: one, or the unwrapped calls of a wrapper. */
  callIds: string[];
  generatedId: boolean;
  /** Reads the preview when the arguments are not JSON text (Vertex builds them by path). */
  read: (() => unknown) | undefined;
  lastPreviewAt: number;
  lastPreview: unknown;
  timer: unknown;
}

/**
 * A slot for a call the provider has just named or started, with nothing of its arguments yet.
 *
 * @example
 * const slot = createSlot('toolu_1', slots.size, 1, gate.limits.maxDepth);
 */
export function createSlot(key: string, order: number, position: number, maxDepth: number): Slot {
  return {
    key,
    order,
    position,
    providerId: undefined,
    name: undefined,
    phase: 'naming',
    parts: [],
    length: 0,
    parsed: 0,
    json: createPartialJson({ maxDepth }),
    whole: undefined,
    callIds: [],
    generatedId: false,
    read: undefined,
    lastPreviewAt: -Infinity,
    lastPreview: undefined,
    timer: undefined,
  };
}

/**
 * The previewer, having read every fragment so far. Fragments are read in one batch per preview
 * (or decision), not one by one, so a burst of tiny deltas costs one pass over their text.
 *
 * @example
 * readJson(slot)?.state(); // 'complete' once the closing bracket arrived
 */
export function readJson(slot: Slot): PartialJson | undefined {
  const json = slot.json;
  if (json !== undefined && slot.parsed < slot.parts.length) {
    const { parts, parsed } = slot;
    let text = parts[parsed] as string;
    if (parts.length - parsed > 1) {
      // The batch replaces its fragments, so a long stream keeps a few strings alive, not thousands.
      text = parts.slice(parsed).join('');
      parts.length = parsed;
      parts.push(text);
    }
    json.push(text);
    slot.parsed = parts.length;
  }
  return json;
}

/**
 * The argument text so far, as one string (the fragments are joined once, and stay joined).
 *
 * @example
 * rawOf(slot); // '{"q":"rates"}'
 */
export function rawOf(slot: Slot): string {
  if (slot.parts.length > 1) {
    readJson(slot);
    slot.parts = [slot.parts.join('')];
    slot.parsed = 1;
  }
  return slot.parts[0] ?? '';
}

/**
 * The call's arguments as the model sent them: what the provider gave whole, else the text so far.
 *
 * @example
 * gate.stream.close(id, argumentsOf(slot));
 */
export function argumentsOf(slot: Slot): unknown {
  return slot.whole === undefined ? rawOf(slot) : slot.whole.value;
}

/**
 * The provider gave the whole arguments. Its final text wins over the fragments; it is read once
 * more, from the start, to know whether it is whole.
 *
 * @example
 * provideWhole(slot, '{"q":"rates"}', 64);
 */
export function provideWhole(slot: Slot, value: unknown, maxDepth: number): void {
  slot.whole = { value };
  if (typeof value === 'string' && value !== rawOf(slot)) {
    slot.parts = [value];
    slot.length = value.length;
    slot.parsed = 0;
    slot.json = createPartialJson({ maxDepth });
  }
}

/**
 * Whether the arguments are whole: a value the provider gave (not text), or JSON text whose
 * closing bracket was written, which an output limit cannot have cut.
 *
 * @example
 * if (cut === undefined || isWhole(slot)) close(slot);
 */
export function isWhole(slot: Slot): boolean {
  const value = slot.whole?.value;
  if (value !== undefined && typeof value !== 'string') return true;
  return readJson(slot)?.state() === 'complete';
}

/**
 * A tool call's arguments as the model wrote them, for replaying its turn: JSON text is read as
 * far as it goes (the whole object, or what arrived of a call that was cut off), and anything that
 * is not an object becomes `{}`, which every provider accepts as a call's input.
 *
 * @example
 * inputAsRead('{"path":"a.md","content":"Hel', 64); // { path: 'a.md', content: 'Hel' }
 */
export function inputAsRead(raw: unknown, maxDepth: number): Record<string, unknown> {
  let value = raw;
  if (typeof raw === 'string') {
    const json = createPartialJson({ maxDepth });
    json.push(raw);
    value = json.preview();
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
