// The press guard on a fake clock: a control ignores presses for its delay after it appears or
// after what it acts on changes, and the keyboard's focus never lands on a control's replacement.
import { act, fireEvent, render, screen } from '@testing-library/react';
import { useRef } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pressKey, useArmed, useFocusCatch } from '../src/press-guard.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A control as the parts draw one: it acts on `on`, and a press before it is armed does nothing. */
function Control({
  on,
  delayMs = 500,
  onPress,
}: {
  on: readonly unknown[];
  delayMs?: number;
  onPress: () => void;
}) {
  const armed = useArmed(pressKey(...on), delayMs);
  return (
    <button type="button" aria-disabled={!armed || undefined} onClick={() => armed && onPress()}>
      Approve
    </button>
  );
}

const wait = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms);
  });
const press = () => fireEvent.click(screen.getByRole('button', { name: 'Approve' }));

describe('useArmed', () => {
  it('ignores a press in the first 500 ms after the control appears, and acts on one after', () => {
    const onPress = vi.fn();
    const input = { amount_cents: 1250 };
    render(<Control on={['awaiting_approval', input]} onPress={onPress} />);
    press();
    wait(499);
    press();
    expect(onPress).not.toHaveBeenCalled();
    expect(screen.getByRole('button')).toHaveAttribute('aria-disabled', 'true');
    wait(1);
    expect(screen.getByRole('button')).not.toHaveAttribute('aria-disabled');
    press();
    expect(onPress).toHaveBeenCalledTimes(1);
  });

  it('waits the whole delay again when what the control acts on is replaced mid-delay', () => {
    const onPress = vi.fn();
    const { rerender } = render(
      <Control on={['awaiting_approval', { amount_cents: 1250 }]} onPress={onPress} />,
    );
    wait(300);
    // Another record's input with the same contents: the person has not read this one yet.
    rerender(<Control on={['awaiting_approval', { amount_cents: 1250 }]} onPress={onPress} />);
    wait(200);
    press();
    wait(299);
    press();
    expect(onPress).not.toHaveBeenCalled();
    wait(1);
    press();
    expect(onPress).toHaveBeenCalledTimes(1);
  });

  it('ignores presses again at once when an armed control changes', () => {
    const onPress = vi.fn();
    const input = { amount_cents: 1250 };
    const { rerender } = render(<Control on={['awaiting_approval', input]} onPress={onPress} />);
    wait(500);
    rerender(<Control on={['executing', input]} onPress={onPress} />);
    press();
    expect(onPress).not.toHaveBeenCalled();
    expect(screen.getByRole('button')).toHaveAttribute('aria-disabled', 'true');
    wait(500);
    press();
    expect(onPress).toHaveBeenCalledTimes(1);
  });

  it('does not restart the wait when the control re-renders acting on the same things', () => {
    const onPress = vi.fn();
    const input = { amount_cents: 1250 };
    const { rerender } = render(<Control on={['awaiting_approval', input]} onPress={onPress} />);
    wait(300);
    rerender(<Control on={['awaiting_approval', input]} onPress={onPress} />);
    wait(200);
    press();
    expect(onPress).toHaveBeenCalledTimes(1);
  });

  it('follows a delay of its own, and with none lets every press act at once', () => {
    const onPress = vi.fn();
    const { rerender } = render(<Control on={['awaiting_approval']} delayMs={100} onPress={onPress} />);
    wait(99);
    press();
    wait(1);
    press();
    expect(onPress).toHaveBeenCalledTimes(1);
    rerender(<Control on={['executing']} delayMs={0} onPress={onPress} />);
    press();
    expect(onPress).toHaveBeenCalledTimes(2);
  });
});

describe('pressKey', () => {
  it('tells objects apart by identity and everything else by value', () => {
    const input = { amount_cents: 1250 };
    expect(pressKey('awaiting_approval', input, true)).toBe(pressKey('awaiting_approval', input, true));
    expect(pressKey('awaiting_approval', { ...input }, true)).not.toBe(
      pressKey('awaiting_approval', input, true),
    );
    expect(pressKey('awaiting_approval', input, false)).not.toBe(pressKey('awaiting_approval', input, true));
    expect(pressKey(undefined)).not.toBe(pressKey(null));
    expect(pressKey('sending', 'approve')).not.toBe(pressKey('sending', 'deny'));
  });
});

/** Approve, replaced by Cancel when `step` moves on, inside a status that catches the focus. */
function Card({ step }: { step: 'approve' | 'cancel' }) {
  const root = useRef<HTMLDivElement>(null);
  const focus = useFocusCatch(root, step);
  return (
    <>
      <div tabIndex={-1} ref={root} data-testid="status">
        <div onFocus={focus.onFocus} onBlur={focus.onBlur}>
          <button type="button" key={step}>
            {step === 'approve' ? 'Approve' : 'Cancel'}
          </button>
        </div>
      </div>
      <button type="button">Elsewhere</button>
    </>
  );
}

describe('useFocusCatch', () => {
  it('moves the focus to the status, not onto the control that replaced the focused one', () => {
    const { rerender } = render(<Card step="approve" />);
    act(() => screen.getByRole('button', { name: 'Approve' }).focus());
    rerender(<Card step="cancel" />);
    expect(screen.getByTestId('status')).toHaveFocus();
    expect(screen.getByRole('button', { name: 'Cancel' })).not.toHaveFocus();
  });

  it('leaves the focus alone when the person has moved on', () => {
    const { rerender } = render(<Card step="approve" />);
    act(() => screen.getByRole('button', { name: 'Approve' }).focus());
    act(() => screen.getByRole('button', { name: 'Elsewhere' }).focus());
    rerender(<Card step="cancel" />);
    expect(screen.getByRole('button', { name: 'Elsewhere' })).toHaveFocus();
  });
});
