// The cost of previewing a streamed argument: toolgate's reader (accumulate each fragment, read it
// once with the incremental partial-JSON reader, publish previews to the gate's store) against one
// JSON.parse of the final string, and against re-parsing the whole buffer on every delta.
import { createStore } from 'zustand/vanilla';
import { createPartialJson, createToolGate, defineTool, readOpenAIChatStream } from '../packages/core/dist/index.js';
import { median, report } from './measure.mjs';

const SIZE = 200 * 1024;

/**
 * Milliseconds of CPU this process has used. Wall time on a shared machine also counts the time
 * the process waits for a core, which lands more often on the longer of two timed workloads and
 * inflates their ratio; CPU time counts only the work.
 */
function cpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** `compare` from measure.mjs (interleaved rounds, median ratio), timed in CPU milliseconds. */
function compare({ subject, baseline, n, rounds = 15, warmup = 3 }) {
  const ratios = [];
  const subjectTimes = [];
  const baselineTimes = [];
  for (let round = 0; round < rounds + warmup; round++) {
    globalThis.gc?.();
    subject.prepare?.();
    baseline.prepare?.();
    const flip = round % 2 === 0;
    const first = flip ? subject : baseline;
    const second = flip ? baseline : subject;
    const t0 = cpuMs();
    first(n);
    const t1 = cpuMs();
    second(n);
    const t2 = cpuMs();
    const s = flip ? t1 - t0 : t2 - t1;
    const b = flip ? t2 - t1 : t1 - t0;
    if (round < warmup) continue;
    ratios.push(s / b);
    subjectTimes.push((s * 1000) / n);
    baselineTimes.push((b * 1000) / n);
  }
  return { ratio: median(ratios), subjectUs: median(subjectTimes), baselineUs: median(baselineTimes) };
}

/** A file write: one long string, as a coding agent sends it. */
function textArgument(size) {
  const line = 'The quarterly numbers moved: "revenue" up 12%, costs flat.\n';
  return JSON.stringify({ path: 'notes/summary.md', content: line.repeat(Math.ceil(size / line.length)).slice(0, size) });
}

/** An order with line items: many small objects, as a shopping tool sends them. */
function recordsArgument(size) {
  const items = [];
  for (let i = 0, length = 0; length < size; i++) {
    const item = { sku: `SKU-${1000 + i}`, name: `Item ${i}, a plain description`, qty: 1 + (i % 4), price_cents: 1299 + i, tags: ['home', 'sale'] };
    items.push(item);
    length += JSON.stringify(item).length + 1;
  }
  return JSON.stringify({ customer_id: 'cus_8f2k', currency: 'USD', items });
}

const tool = defineTool({ name: 'submit', inputSchema: { type: 'object' }, execute: () => null });

/** The Chat Completions chunks of one call whose arguments arrive in `deltas` fragments. */
function chunks(text, deltas) {
  const step = Math.ceil(text.length / deltas);
  const out = [{ id: 'chatcmpl-b', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_b', function: { name: 'submit', arguments: '' } }] }, finish_reason: null }] }];
  for (let i = 0; i < text.length; i += step) {
    out.push({ id: 'chatcmpl-b', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: text.slice(i, i + step) } }] }, finish_reason: null }] });
  }
  return out;
}

/**
 * Simulated time: the stream delivers one delta per millisecond (a fast model), so previews are
 * published at their real rate (every 50 ms: every 50th delta) without the bench waiting.
 */
function streamClock() {
  let now = 0;
  let timers = [];
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const timer = { at: now + ms, callback };
      timers.push(timer);
      return timer;
    },
    clearTimeout(timer) {
      timers = timers.filter((t) => t !== timer);
    },
    tick(ms) {
      now += ms;
      if (timers.length === 0 || timers[0].at > now) return;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const timer of due) timer.callback();
    },
  };
}

/**
 * Feeds a stream's chunks through toolgate's reader into a gate whose store has a subscriber, as a
 * UI has: every delta accumulated, every preview published (including the last one, after the
 * final delta) and every store notification made. The finish chunk, which validates and runs the
 * call, is outside the timed part.
 */
function toolgateRunner(stream, previewIntervalMs) {
  let pending = [];
  const runner = (n) => {
    for (let i = 0; i < n; i++) {
      const { reader, clock } = pending[i];
      for (const chunk of stream) {
        reader.push(chunk);
        clock.tick(1);
      }
      clock.tick(previewIntervalMs);
    }
  };
  runner.prepare = () => {
    for (const { reader } of pending) reader.abort();
    pending = [];
    for (let i = 0; i < 5; i++) {
      const gate = createToolGate({ tools: [tool], store: createStore(() => ({})) });
      const clock = streamClock();
      let seen = 0;
      gate.calls.subscribe(() => seen++);
      pending.push({ reader: readOpenAIChatStream(gate, { previewIntervalMs, clock }), clock, seen: () => seen });
    }
  };
  runner.notifications = () => median(pending.map((p) => p.seen()));
  return runner;
}

const parseRunner = (text) => (n) => {
  for (let i = 0; i < n; i++) JSON.parse(text);
};

/** The re-parse approach: a (linear) partial-JSON parse of the whole buffer after each delta. */
function reparseDelta(buffer) {
  const json = createPartialJson();
  json.push(buffer);
  return json.preview();
}

/**
 * Per-delta time of the re-parse approach, from a sample of deltas spread over the stream (every
 * re-parse is independent of the others, so the sample's mean times the count is the total).
 */
function reparsePerDeltaUs(text, deltas, sample = 200) {
  const step = Math.ceil(text.length / deltas);
  const every = Math.max(1, Math.floor(deltas / sample));
  let total = 0;
  let count = 0;
  for (let d = 0; d < deltas; d += every) {
    const buffer = text.slice(0, Math.min(text.length, (d + 1) * step));
    const t0 = cpuMs();
    reparseDelta(buffer);
    total += cpuMs() - t0;
    count++;
  }
  return (total * 1000) / count;
}

/** Per-delta time of toolgate's reader over a whole stream (median of rounds, each from a clean heap). */
function toolgatePerDeltaUs(stream, rounds = 15) {
  const run = toolgateRunner(stream, 50);
  const times = [];
  for (let r = 0; r < rounds; r++) {
    run.prepare();
    globalThis.gc?.();
    const t0 = cpuMs();
    run(1);
    times.push(((cpuMs() - t0) * 1000) / stream.length);
  }
  run.prepare();
  return median(times.slice(3));
}

let ok = true;
console.log('\nstreaming: preview cost of one streamed argument (CPU time, median of interleaved rounds)');
console.log(`${'case'.padEnd(58)} ${'toolgate'.padStart(10)}    ${'JSON.parse'.padStart(10)}   ratio`);
for (const [shape, make] of [
  ['file write', textArgument],
  ['order records', recordsArgument],
]) {
  const text = make(SIZE);
  for (const deltas of [20_000, 2_000]) {
    const stream = chunks(text, deltas);
    const subject = toolgateRunner(stream, 50);
    const result = compare({ subject, baseline: parseRunner(text), n: 5, rounds: 11 });
    ok = report(`${shape}, ${(text.length / 1024).toFixed(0)} KB in ${deltas.toLocaleString('en')} deltas`, result, 10) && ok;
    console.log(`${''.padEnd(58)} (${subject.notifications()} previews published to the store per stream)`);
  }
}
{
  // Every delta notifies the store: no batching at all, for comparison.
  const text = textArgument(SIZE);
  const stream = chunks(text, 20_000);
  const subject = toolgateRunner(stream, 0);
  const result = compare({ subject, baseline: parseRunner(text), n: 5, rounds: 7 });
  report(`file write, 20,000 deltas, a store update per delta`, result, Infinity);
  console.log(`${''.padEnd(58)} (${subject.notifications()} store notifications per stream)`);
}

console.log('\nstreaming: per-delta cost as the buffer grows (10-character deltas)');
console.log(`${'shape'.padEnd(16)} ${'deltas'.padStart(7)} ${'buffer'.padStart(8)}  ${'toolgate µs/delta'.padStart(18)}  ${'re-parse µs/delta'.padStart(18)}`);
for (const [shape, make] of [
  ['file write', textArgument],
  ['order records', recordsArgument],
]) {
  const perDelta = [];
  for (const deltas of [2_000, 20_000]) {
    const text = make(deltas * 10);
    const stream = chunks(text, deltas);
    const ours = toolgatePerDeltaUs(stream);
    const theirs = reparsePerDeltaUs(text, deltas);
    perDelta.push({ ours, theirs });
    console.log(
      `${shape.padEnd(16)} ${deltas.toLocaleString('en').padStart(7)} ${`${(text.length / 1024).toFixed(0)} KB`.padStart(8)}  ${ours.toFixed(3).padStart(18)}  ${theirs.toFixed(1).padStart(18)}`,
    );
  }
  const [small, large] = perDelta;
  const growth = large.ours / small.ours;
  const fine = growth <= 1.5;
  ok = fine && ok;
  console.log(
    `${''.padEnd(16)} 10× the buffer: toolgate per delta ×${growth.toFixed(2)} (target ≤ 1.5) ${fine ? 'ok' : 'MISSED'}; re-parse per delta ×${(large.theirs / small.theirs).toFixed(1)}`,
  );
}
{
  const text = textArgument(SIZE);
  const total = (reparsePerDeltaUs(text, 20_000) * 20_000) / 1000;
  console.log(`\nre-parse approach, 200 KB in 20,000 deltas: ~${(total / 1000).toFixed(1)} s of parsing (sampled), vs toolgate above`);
}

if (!ok) process.exitCode = 1;
