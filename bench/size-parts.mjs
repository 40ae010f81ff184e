// Which part of a built app its gzipped bytes are, from the chunk's source map: every minified
// byte belongs to the source its mapping names, and a part costs what gzip saves once its bytes
// are gone (gzip shares a dictionary across the whole file, so the parts do not add up exactly).
import { gzipSync } from 'node:zlib';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((char, value) => [char, value]));

/** Each generated segment of a v3 source map: its line, first column and source index. */
function segmentsOf(mappings) {
  const segments = [];
  let source = 0;
  mappings.split(';').forEach((line, lineIndex) => {
    let column = 0;
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = DIGIT.get(char);
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
          continue;
        }
        fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
        value = 0;
        shift = 0;
      }
      column += fields[0];
      if (fields.length > 1) source += fields[1];
      segments.push({ line: lineIndex, column, source: fields.length > 1 ? source : -1 });
    }
  });
  return segments;
}

/**
 * The gzipped bytes each part costs in one chunk: `parts` maps a label to a test on a source's
 * path. A byte with no mapping, or whose source no part claims, is left out of every part.
 */
export function partsOf(code, map, parts) {
  const lines = code.split('\n');
  const owner = lines.map((line) => new Array(line.length).fill(undefined));
  const labels = Object.keys(parts);
  const sources = map.sources.map((path) => labels.find((label) => parts[label](path)));
  const segments = segmentsOf(map.mappings);
  segments.forEach((segment, index) => {
    const next = segments[index + 1];
    const end = next !== undefined && next.line === segment.line ? next.column : lines[segment.line].length;
    const label = segment.source < 0 ? undefined : sources[segment.source];
    owner[segment.line].fill(label, segment.column, end);
  });
  const whole = gzipSync(code, { level: 9 }).length;
  const costs = {};
  for (const label of labels) {
    const without = lines
      .map((line, l) =>
        line
          .split('')
          .filter((_, c) => owner[l][c] !== label)
          .join(''),
      )
      .join('\n');
    costs[label] = whole - gzipSync(without, { level: 9 }).length;
  }
  return costs;
}
