import type { Issue, Repair } from '../record/record.ts';
import { DEFAULT_LIMITS, nestsTooDeep, type Limits } from './limits.ts';
import { describeValue, valueAt } from '../schema/schema.ts';

/**
 * Known model defects a tool may opt in to having repaired. None is repaired by default: each is
 * rejected with a reason that names it. A repaired input is validated like any other, and each
 * repair is recorded on the call and in the audit trail.
 *
 * - `empty_arguments`: `""` sent for a tool without arguments, read as `{}`.
 * - `double_encoded`: the arguments are a JSON string that contains the JSON object.
 * - `trailing_text`: a code fence around the JSON, or prose after it.
 * - `string_scalars`: a number, boolean or null sent as a string where the schema wants that type.
 * - `stringified_json`: a nested array or object sent as a JSON string where the schema wants it.
 * - `parallel_wrapper`: the call came inside a `multi_tool_use.parallel` wrapper; the provider stream
 *   readers unwrap it only when every tool named inside allows this, and answer the wrapper's id once.
 *
 * A truncated call is never repaired, and neither are two objects concatenated into one call.
 *
 * @example
 * defineTool({ name: 'search', inputSchema, execute, repair: ['string_scalars', 'trailing_text'] });
 */
export type RepairKind =
  | 'empty_arguments'
  | 'double_encoded'
  | 'trailing_text'
  | 'string_scalars'
  | 'stringified_json'
  | 'parallel_wrapper';

/**
 * Every repair kind, for tools that accept them all.
 *
 * @example
 * defineTool({ ...config, repair: ALL_REPAIRS });
 */
export const ALL_REPAIRS: readonly RepairKind[] = /* @__PURE__ */ Object.freeze([
  'empty_arguments',
  'double_encoded',
  'trailing_text',
  'string_scalars',
  'stringified_json',
  'parallel_wrapper',
]);

/**
 * Rewrites, where the tool allows it, the string values that validation flagged and that are
 * JSON for what the schema wanted (`"5"` for an integer, `"[1,2]"` for an array). Returns
 * `undefined` when nothing could be rewritten. The caller checks the result against the limits
 * (a decoded string may nest deep or hold a `__proto__` key) and validates it again, so a rewrite
 * that does not satisfy the schema is not kept.
 *
 * @example
 * repairValues({ limit: '5' }, [{ path: '/limit', message: 'must be integer', keyword: 'type' }], ['string_scalars']);
 * // { value: { limit: 5 }, repairs: [{ kind: 'string_scalars', path: '/limit', message: 'read string "5" as integer 5' }] }
 */
export function repairValues(
  value: unknown,
  issues: readonly Issue[],
  allowed: readonly RepairKind[],
  limits: Limits = DEFAULT_LIMITS,
): { value: unknown; repairs: Repair[] } | undefined {
  const scalars = allowed.includes('string_scalars');
  const nested = allowed.includes('stringified_json');
  if (!scalars && !nested) return undefined;
  let next = value;
  const repairs: Repair[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    if (issue.keyword !== undefined && issue.keyword !== 'type') continue;
    if (issue.path === '' || seen.has(issue.path)) continue;
    const found = valueAt(next, issue.path);
    // A string that nests too deep is left as it is (and stays rejected); it is never parsed.
    if (typeof found !== 'string' || nestsTooDeep(found, limits.maxDepth)) continue;
    let decoded: unknown;
    try {
      decoded = JSON.parse(found);
    } catch {
      continue;
    }
    const structured = typeof decoded === 'object' && decoded !== null;
    if (structured ? !nested : !scalars || typeof decoded === 'string') continue;
    seen.add(issue.path);
    next = setAt(next, issue.path, decoded);
    repairs.push({
      kind: structured ? 'stringified_json' : 'string_scalars',
      path: issue.path,
      message: `read ${describeValue(found)} as ${describeValue(decoded)}`,
    });
  }
  return repairs.length === 0 ? undefined : { value: next, repairs };
}

/** Copies only the containers along `pointer`, so the model's original value is left as it was. */
function setAt(root: unknown, pointer: string, replacement: unknown): unknown {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  const write = (node: unknown, depth: number): unknown => {
    if (depth === keys.length) return replacement;
    const key = keys[depth] as string;
    if (Array.isArray(node)) {
      const copy = node.slice();
      copy[Number(key)] = write(node[Number(key)], depth + 1);
      return copy;
    }
    const copy = { ...(node as Record<string, unknown>) };
    copy[key] = write((node as Record<string, unknown>)[key], depth + 1);
    return copy;
  };
  return write(root, 0);
}
