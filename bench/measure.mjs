// Shared measuring for the benches: ratios of two workloads timed side by side in the same run,
// interleaved round by round so that a noisy machine slows both alike.
import { availableParallelism, loadavg } from 'node:os';

/**
 * Prints the machine's load (1, 5 and 15 minute averages, and the cores there are): ratios hold up
 * on a busy machine better than times do, but a figure means little without the load it was taken
 * under. Each bench prints it as it starts and as it ends.
 */
export function load(when) {
  const [one, five, fifteen] = loadavg();
  console.log(
    `load ${when}: ${one.toFixed(2)} ${five.toFixed(2)} ${fifteen.toFixed(2)} on ${availableParallelism()} cores`,
  );
}

/**
 * Times `subject` and `baseline` (each a function that does `n` operations, with an optional
 * `prepare()` run untimed before each round) in alternating order, round by round, and returns
 * the median ratio subject/baseline plus the per-operation medians in microseconds. With
 * `statistic: 'quartile'` each side's figure is its lower-quartile time instead, and the ratio is
 * theirs: on a busy machine a run that waited for a core is slow for reasons that are not the
 * code, and that lands more often on the longer of two workloads.
 *
 * Each round starts after a full collection (`collect: true`), so one side's garbage is not the
 * other's cost. With `collect: false` it does not: a full collection makes V8 throw away optimized
 * code that refers to objects it found dead (`--trace-deopt`: "weak objects") and re-learn its
 * inline caches, so code of many small functions (a gate) runs each round re-warming, which an
 * app's long-lived code does not; the alternating order still charges garbage to both sides alike.
 */
export function compare({
  subject,
  baseline,
  n,
  rounds = 15,
  warmup = 3,
  statistic = 'median',
  collect = true,
}) {
  const ratios = [];
  const subjectTimes = [];
  const baselineTimes = [];
  for (let round = 0; round < rounds + warmup; round++) {
    if (collect || round === 0) globalThis.gc?.();
    subject.prepare?.();
    baseline.prepare?.();
    const flip = round % 2 === 0;
    const first = flip ? subject : baseline;
    const second = flip ? baseline : subject;
    const t0 = performance.now();
    first(n);
    const t1 = performance.now();
    second(n);
    const t2 = performance.now();
    const s = flip ? t1 - t0 : t2 - t1;
    const b = flip ? t2 - t1 : t1 - t0;
    if (round < warmup) continue;
    ratios.push(s / b);
    subjectTimes.push((s * 1000) / n);
    baselineTimes.push((b * 1000) / n);
  }
  if (statistic === 'quartile') {
    const subjectUs = quartile(subjectTimes);
    const baselineUs = quartile(baselineTimes);
    return { ratio: subjectUs / baselineUs, subjectUs, baselineUs };
  }
  return { ratio: median(ratios), subjectUs: median(subjectTimes), baselineUs: median(baselineTimes) };
}

/** The lower quartile: on a shared machine, the runs least disturbed by other processes. */
export function quartile(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 4)];
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Prints one row: what, the two per-op figures, the ratio and the target (`Infinity`: none). Returns whether it met it. */
export function report(label, { ratio, subjectUs, baselineUs }, target) {
  const ok = ratio <= target;
  const verdict = target === Infinity ? '' : `(target ≤ ${target}×) ${ok ? 'ok' : 'MISSED'}`;
  console.log(
    `${label.padEnd(58)} ${fmt(subjectUs).padStart(10)} vs ${fmt(baselineUs).padStart(10)}  ${ratio.toFixed(2).padStart(6)}×  ${verdict}`,
  );
  return ok;
}

/** Prints one row of latencies (milliseconds, one per operation): its median and 99th percentile. */
export function latency(label, samplesMs) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  console.log(
    `${label.padEnd(58)} ${fmt(at(0.5) * 1000).padStart(10)}    ${fmt(at(0.99) * 1000).padStart(10)}`,
  );
}

function fmt(us) {
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} µs`;
}

/**
 * {@link compare} for asynchronous workloads: `subject(n)` and `baseline(n)` return promises, and
 * are awaited in alternating order, round by round.
 */
export async function compareAsync({ subject, baseline, n, rounds = 9, warmup = 2, statistic = 'median' }) {
  const ratios = [];
  const subjectTimes = [];
  const baselineTimes = [];
  for (let round = 0; round < rounds + warmup; round++) {
    globalThis.gc?.();
    await subject.prepare?.();
    await baseline.prepare?.();
    const flip = round % 2 === 0;
    const first = flip ? subject : baseline;
    const second = flip ? baseline : subject;
    const t0 = performance.now();
    await first(n);
    const t1 = performance.now();
    await second(n);
    const t2 = performance.now();
    const s = flip ? t1 - t0 : t2 - t1;
    const b = flip ? t2 - t1 : t1 - t0;
    if (round < warmup) continue;
    ratios.push(s / b);
    subjectTimes.push((s * 1000) / n);
    baselineTimes.push((b * 1000) / n);
  }
  if (statistic === 'quartile') {
    const subjectUs = quartile(subjectTimes);
    const baselineUs = quartile(baselineTimes);
    return { ratio: subjectUs / baselineUs, subjectUs, baselineUs };
  }
  return { ratio: median(ratios), subjectUs: median(subjectTimes), baselineUs: median(baselineTimes) };
}
