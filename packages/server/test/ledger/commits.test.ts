import { describe, expect, it } from 'vitest';
import { createCommitSignal } from '../../src/ledger/commits.ts';

describe('the commit signal', () => {
  it('watches other processes only while someone listens, and hands each listener what was committed', () => {
    const watching: string[] = [];
    let wakeFromWatch: ((seq?: number) => void) | undefined;
    const errors: unknown[] = [];
    const commits = createCommitSignal(
      {
        watch: (wake) => {
          watching.push('start');
          wakeFromWatch = wake;
          return () => watching.push('stop');
        },
      },
      (error) => errors.push(error),
    );
    const heard: unknown[] = [];
    const stopFirst = commits.onCommitted((committed) => heard.push(['first', committed]));
    const stopSecond = commits.onCommitted(() => {
      throw new Error('listener bug');
    });
    expect(watching).toEqual(['start']);
    wakeFromWatch?.(7);
    commits.wake([]);
    expect(heard).toEqual([
      ['first', 7],
      ['first', []],
    ]);
    expect(errors).toHaveLength(2);
    stopFirst();
    expect(watching).toEqual(['start']);
    stopSecond();
    expect(watching).toEqual(['start', 'stop']);
  });

  it('takes no listener once closed', () => {
    let started = 0;
    const commits = createCommitSignal({ watch: () => ((started += 1), () => undefined) }, () => undefined);
    commits.close();
    commits.onCommitted(() => undefined);
    expect(started).toBe(0);
  });
});
