// The cost of previewing a streamed argument: toolgate's reader (accumulate each fragment, read it
// once with the incremental partial-JSON reader, publish previews to the gate's store) against one
// JSON.parse of the final string, and against re-parsing the whole buffer on every delta.
import { createStore } from 'zustand/vanilla';
import { createToolGate, defineTool } from '../packages/core/dist/index.js';
import { createPartialJson } from '../packages/core/dist/kit.js';
import { readOpenAIChatStream } from '../packages/core/dist/openai.js';
import { compare as compareRounds, median, quartile, report } from './measure.mjs';

const compare = (options) => compareRounds({ rounds: 21, warmup: 5, statistic: 'quartile', ...options });

const SIZE = 200 * 1024;

/** A file write: one long string, as a coding agent sends it. */
function textArgument(size) {
  const line = 'The quarterly numbers moved: "revenue" up 12%, costs flat.\n';
  return JSON.stringify({
    path: 'notes/summary.md',
    content: line.repeat(Math.ceil(size / line.length)).slice(0, size),
  });
}

/** An order with line items: many small objects, as a shopping tool sends them. */
function recordsArgument(size) {
  const items = [];
  for (let i = 0, length = 0; length < size; i++) {
    const item = {
      sku: `SKU-${1000 + i}`,
      name: `Item ${i}, a plain description`,
      qty: 1 + (i % 4),
      price_cents: 1299 + i,
      tags: ['home', 'sale'],
    };
    items.push(item);
    length += JSON.stringify(item).length + 1;
  }
  return JSON.stringify({ customer_id: 'cus_8f2k', currency: 'USD', items });
}

const tool = defineTool({ name: 'submit', inputSchema: { type: 'object' }, execute: () => null });

/** The Chat Completions chunks of one call whose arguments arrive in `deltas` fragments. */
function chunks(text, deltas) {
  const step = Math.ceil(text.length / deltas);
  const out = [
    {
      id: 'chatcmpl-b',
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 'call_b', function: { name: 'submit', arguments: '' } }] },
          finish_reason: null,
        },
      ],
    },
  ];
  for (let i = 0; i < text.length; i += step) {
    out.push({
      id: 'chatcmpl-b',
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: text.slice(i, i + step) } }] },
          finish_reason: null,
        },
      ],
    });
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
  let next = Infinity;
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const timer = { at: now + ms, callback };
      timers.push(timer);
      next = Math.min(next, timer.at);
      return timer;
    },
    clearTimeout(timer) {
      timers = timers.filter((t) => t !== timer);
    },
    tick(ms) {
      now += ms;
      if (now < next) return;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      next = Math.min(Infinity, ...timers.map((t) => t.at));
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
      pending.push({
        reader: readOpenAIChatStream(gate, { previewIntervalMs, clock }),
        clock,
        seen: () => seen,
      });
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
    const t0 = performance.now();
    reparseDelta(buffer);
    total += performance.now() - t0;
    count++;
  }
  return (total * 1000) / count;
}

/**
 * Per-delta CPU time of toolgate's reader over the first and the last `segment` deltas of one
 * stream: the same stream, the same reader, only the buffer behind each delta differs.
 */
function toolgateSegmentsUs(stream, segment, rounds = 15) {
  const first = [];
  const last = [];
  for (let round = 0; round < rounds; round++) {
    const gate = createToolGate({ tools: [tool], store: createStore(() => ({})) });
    gate.calls.subscribe(() => undefined);
    const clock = streamClock();
    const reader = readOpenAIChatStream(gate, { clock });
    const feed = (from, to) => {
      const t0 = performance.now();
      for (let i = from; i < to; i++) {
        reader.push(stream[i]);
        clock.tick(1);
      }
      return ((performance.now() - t0) * 1000) / (to - from);
    };
    const a = feed(0, segment);
    feed(segment, stream.length - segment);
    const b = feed(stream.length - segment, stream.length);
    reader.abort();
    // The first rounds warm the JIT up.
    if (round >= 3) {
      first.push(a);
      last.push(b);
    }
  }
  return { first: quartile(first), last: quartile(last) };
}

/** Per-delta time of the re-parse approach at one buffer length. */
function reparseAtUs(text, length, samples = 40) {
  const buffer = text.slice(0, length);
  const times = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    reparseDelta(buffer);
    times.push((performance.now() - t0) * 1000);
  }
  return quartile(times);
}

let ok = true;
console.log('\nstreaming: preview cost of one streamed argument (lower quartile of interleaved rounds)');
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
    ok =
      report(
        `${shape}, ${(text.length / 1024).toFixed(0)} KB in ${deltas.toLocaleString('en')} deltas`,
        result,
        10,
      ) && ok;
    console.log(`${''.padEnd(58)} (${subject.notifications()} previews published to the store per stream)`);
  }
}
{
  // Every delta notifies the store: no batching at all, for comparison.
  const text = textArgument(SIZE);
  const stream = chunks(text, 20_000);
  const subject = toolgateRunner(stream, 0);
  const result = compare({ subject, baseline: parseRunner(text), n: 5, rounds: 7 });
  const us = (value) => (value >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(2)} µs`);
  console.log(
    `${'file write, 20,000 deltas, a store update per delta'.padEnd(58)} ${us(result.subjectUs).padStart(10)} vs ${us(result.baselineUs).padStart(10)}  ${result.ratio.toFixed(2).padStart(6)}×  (no target: for comparison)`,
  );
  console.log(`${''.padEnd(58)} (${subject.notifications()} store notifications per stream)`);
}

console.log('\nstreaming: per-delta cost as the buffer grows, in one 200 KB stream of 20,000 deltas');
console.log(
  `${'shape'.padEnd(16)} ${'deltas'.padStart(15)} ${'buffer'.padStart(14)}  ${'toolgate µs/delta'.padStart(18)}  ${'re-parse µs/delta'.padStart(18)}`,
);
for (const [shape, make] of [
  ['file write', textArgument],
  ['order records', recordsArgument],
]) {
  const text = make(SIZE);
  const stream = chunks(text, 20_000);
  const step = Math.ceil(text.length / 20_000);
  const segment = 2_000;
  const ours = toolgateSegmentsUs(stream, segment);
  const early = reparseAtUs(text, segment * step);
  const late = reparseAtUs(text, text.length);
  const kb = (chars) => `${(chars / 1024).toFixed(0)} KB`;
  console.log(
    `${shape.padEnd(16)} ${'1–2,000'.padStart(15)} ${`≤ ${kb(segment * step)}`.padStart(14)}  ${ours.first.toFixed(3).padStart(18)}  ${early.toFixed(1).padStart(18)}`,
  );
  console.log(
    `${''.padEnd(16)} ${'18,001–20,000'.padStart(15)} ${`≥ ${kb(text.length - segment * step)}`.padStart(14)}  ${ours.last.toFixed(3).padStart(18)}  ${late.toFixed(1).padStart(18)}`,
  );
  const growth = ours.last / ours.first;
  const fine = growth <= 1.5;
  ok = fine && ok;
  console.log(
    `${''.padEnd(16)} 10× the buffer: toolgate per delta ×${growth.toFixed(2)} (target ≤ 1.5) ${fine ? 'ok' : 'MISSED'}; re-parse per delta ×${(late / early).toFixed(1)}`,
  );
}
{
  const text = textArgument(SIZE);
  const total = (reparsePerDeltaUs(text, 20_000) * 20_000) / 1000;
  console.log(
    `\nre-parse approach, 200 KB in 20,000 deltas: ~${(total / 1000).toFixed(1)} s of parsing (sampled), vs toolgate above`,
  );
}

if (!ok) process.exitCode = 1;
