import { useEffect, useLayoutEffect, useRef, useState, type FocusEvent, type RefObject } from 'react';

// A press meant for one control must never land on the one that replaced it. A person reads a
// button, moves to press it, and in that moment the call moves: Approve becomes Cancel, another
// record's input takes the place of the one they read, a settle form appears. Two guards keep the
// press where it was aimed. In time: a control ignores presses for `pressDelayMs` after it appears
// or after what it acts on changes (`useArmed`, keyed by `pressKey`). In place: when the control
// under the keyboard goes away, the focus goes to the status itself, not to its replacement, so a
// second Enter lands nowhere (`useFocusCatch`).

/** How long after a control appears or changes a press on it is ignored, by default. */
export const PRESS_DELAY_MS = 500;

// A number per object, so that another object with the same contents (another record's input) is
// another key: the person has not seen that one yet.
const objectIds = new WeakMap<object, number>();
let nextObjectId = 0;

/**
 * What a control acts on, as one key: objects by identity, everything else by value. When the key
 * changes, the control is another one to the person, and its presses wait again.
 */
export function pressKey(...parts: readonly unknown[]): string {
  return parts
    .map((part) => {
      if ((typeof part !== 'object' && typeof part !== 'function') || part === null)
        return `v:${String(part)}`;
      let known = objectIds.get(part);
      if (known === undefined) objectIds.set(part, (known = ++nextObjectId));
      return `o:${known}`;
    })
    .join('|');
}

/**
 * Whether a press may land: `false` from the moment `key` changes (a control appeared, or what it
 * acts on changed) until `delayMs` have passed, and always `true` with no delay. A re-render with
 * the same key does not start the wait again.
 */
export function useArmed(key: string, delayMs: number): boolean {
  const [armed, setArmed] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (delayMs <= 0) return;
    const timer = setTimeout(() => setArmed(key), delayMs);
    return () => clearTimeout(timer);
  }, [key, delayMs]);
  return delayMs <= 0 || armed === key;
}

/**
 * Keeps the keyboard's place when the controls under it go away (the call moved, a form was
 * answered): focus moves to the status itself, never to the control that took their place and
 * never to the top of the page. Removing a focused element fires no blur, so `holds` stays true
 * when a move takes the control away, and the effect catches the focus.
 */
export function useFocusCatch(
  root: RefObject<HTMLElement | null>,
  key: string,
): {
  readonly onFocus: () => void;
  readonly onBlur: (event: FocusEvent<HTMLElement>) => void;
} {
  const holds = useRef(false);
  useLayoutEffect(() => {
    const element = root.current;
    if (!holds.current || element === null) return;
    const focused = document.activeElement;
    if (focused !== null && focused !== document.body) return;
    holds.current = false;
    element.focus();
  }, [key, root]);
  return {
    onFocus: () => void (holds.current = true),
    onBlur: (event) => {
      if (!event.currentTarget.contains(event.relatedTarget)) holds.current = false;
    },
  };
}
