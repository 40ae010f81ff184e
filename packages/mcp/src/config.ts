import { isAbsolute, resolve } from 'node:path';

/**
 * An upstream MCP server the gateway spawns and talks to over stdio. `env` is added to a minimal
 * inherited environment (`PATH`, `HOME`, … as the MCP SDK picks them), so a server gets the
 * variables its config names and not every secret of the client's environment.
 *
 * @example
 * const files: StdioUpstream = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'] };
 */
export interface StdioUpstream {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** The directory it starts in (default: the gateway's). */
  readonly cwd?: string;
}

/**
 * An upstream MCP server reached over Streamable HTTP.
 *
 * @example
 * const tickets: HttpUpstream = { url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: `Bearer ${process.env.TICKETS_TOKEN}` } };
 */
export interface HttpUpstream {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One upstream MCP server, by how the gateway reaches it.
 *
 * @example
 * const upstream: UpstreamSpec = { command: 'node', args: ['server.js'] };
 */
export type UpstreamSpec = StdioUpstream | HttpUpstream;

/**
 * What the gateway decides about one tool. Every tool needs a person's approval unless its policy
 * says `"never"`: an upstream's annotations (`readOnlyHint`…) are its own word and exempt nothing.
 *
 * @example
 * const policy: ToolPolicy = { approval: 'never', timeoutMs: 10_000 };
 */
export interface ToolPolicy {
  readonly approval?: 'always' | 'never';
  /** How long the upstream may take before the call is cancelled with `timeout` (default: the gateway's `timeoutMs`). */
  readonly timeoutMs?: number;
}

/**
 * The bin's config file, as read by {@link readGatewayConfig}.
 *
 * @example
 * const config: GatewayConfig = {
 *   ledger: './toolgate.db',
 *   upstreams: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'] } },
 *   tools: { read_text_file: { approval: 'never' } },
 *   approvalPage: { port: 7788 },
 * };
 */
export interface GatewayConfig {
  /** An SQLite file (relative to the config file) or a `postgres://` URL. Default: `toolgate-mcp.db` beside the config file. */
  readonly ledger: string;
  readonly upstreams: Readonly<Record<string, UpstreamSpec>>;
  readonly tools: Readonly<Record<string, ToolPolicy>>;
  readonly approvalPage: { readonly port: number };
  /** Who approves, and whose calls these are (default: the user running the gateway). */
  readonly principal?: string;
  /** More people who may approve, each with a page link of their own, so the ledger names who decided. */
  readonly approvers?: readonly string[];
  /** How long a `tools/call` waits for a decision before it answers where to approve (default 10 s). */
  readonly approvalWaitMs?: number;
  /** How long an upstream may take on a call (default 5 minutes). */
  readonly timeoutMs?: number;
  /** How long a running call's claim lasts unrenewed: after a crash, the call is settled once it ran out (default 30 s). */
  readonly leaseMs?: number;
  /** How long to wait for an upstream to connect and list its tools (default 20 s). */
  readonly connectTimeoutMs?: number;
}

/**
 * A config file that cannot be used; the message says which key and why.
 *
 * @example
 * try { readGatewayConfig(text, dir); } catch (error) { if (error instanceof ConfigError) console.error(error.message); }
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const TOP_KEYS = new Set([
  'ledger',
  'upstreams',
  'tools',
  'approvalPage',
  'principal',
  'approvers',
  'approvalWaitMs',
  'timeoutMs',
  'leaseMs',
  'connectTimeoutMs',
  '$schema',
]);
const UPSTREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Reads a config file's text. Relative paths (the SQLite ledger, an upstream's `cwd`) are taken
 * from `directory`, the config file's folder, since MCP clients start servers in a folder of
 * their own choosing. Unknown keys are refused: a misspelt `"approval"` must not go unnoticed.
 *
 * @example
 * const config = readGatewayConfig(readFileSync('toolgate.json', 'utf8'), process.cwd());
 */
export function readGatewayConfig(text: string, directory: string): GatewayConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`the config is not JSON: ${(error as Error).message}`);
  }
  const top = object(raw, 'the config');
  for (const key of Object.keys(top))
    if (!TOP_KEYS.has(key))
      throw new ConfigError(
        `the config has an unknown key "${key}" (known: ${[...TOP_KEYS].filter((k) => k !== '$schema').join(', ')})`,
      );

  const ledger = optionalString(top['ledger'], 'ledger') ?? 'toolgate-mcp.db';
  const upstreams = object(top['upstreams'], 'upstreams');
  const names = Object.keys(upstreams);
  if (names.length === 0)
    throw new ConfigError(
      '"upstreams" names no server: add at least one, e.g. { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] } }',
    );
  const specs: Record<string, UpstreamSpec> = {};
  for (const name of names) {
    if (!UPSTREAM_NAME.test(name))
      throw new ConfigError(`upstream name "${name}" must be 1 to 64 letters, digits, "_" or "-"`);
    specs[name] = readUpstream(upstreams[name], `upstreams.${name}`, directory);
  }

  const tools: Record<string, ToolPolicy> = {};
  const policies = top['tools'] === undefined ? {} : object(top['tools'], 'tools');
  for (const [tool, value] of Object.entries(policies)) tools[tool] = readPolicy(value, `tools.${tool}`);

  const page = top['approvalPage'] === undefined ? {} : object(top['approvalPage'], 'approvalPage');
  for (const key of Object.keys(page))
    if (key !== 'port') throw new ConfigError(`"approvalPage" has an unknown key "${key}" (known: port)`);
  const port = page['port'] === undefined ? 0 : page['port'];
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConfigError('"approvalPage.port" must be a port number from 0 (any free port) to 65535');

  const principal = optionalString(top['principal'], 'principal');
  const approvers = optionalNames(top['approvers'], 'approvers');
  const approvalWaitMs = optionalMs(top['approvalWaitMs'], 'approvalWaitMs', true);
  const timeoutMs = optionalMs(top['timeoutMs'], 'timeoutMs', false);
  const leaseMs = optionalMs(top['leaseMs'], 'leaseMs', false);
  const connectTimeoutMs = optionalMs(top['connectTimeoutMs'], 'connectTimeoutMs', false);
  return {
    ledger: isPostgres(ledger) || ledger === ':memory:' ? ledger : absolute(ledger, directory),
    upstreams: specs,
    tools,
    approvalPage: { port },
    ...(principal === undefined ? {} : { principal }),
    ...(approvers === undefined ? {} : { approvers }),
    ...(approvalWaitMs === undefined ? {} : { approvalWaitMs }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
  };
}

/**
 * Whether a ledger setting names a PostgreSQL database rather than an SQLite file.
 *
 * @example
 * isPostgres('postgres://localhost/toolgate'); // true
 */
export function isPostgres(ledger: string): boolean {
  return /^postgres(ql)?:\/\//i.test(ledger);
}

function readUpstream(value: unknown, where: string, directory: string): UpstreamSpec {
  const spec = object(value, where);
  if ('url' in spec) {
    for (const key of Object.keys(spec))
      if (key !== 'url' && key !== 'headers')
        throw new ConfigError(`"${where}" has an unknown key "${key}" (an HTTP upstream takes url, headers)`);
    const url = optionalString(spec['url'], `${where}.url`) ?? '';
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`"${where}.url" must be an http:// or https:// URL (got ${JSON.stringify(url)})`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new ConfigError(`"${where}.url" must be an http:// or https:// URL (got ${JSON.stringify(url)})`);
    const headers = spec['headers'] === undefined ? undefined : strings(spec['headers'], `${where}.headers`);
    return headers === undefined ? { url } : { url, headers };
  }
  for (const key of Object.keys(spec))
    if (!['command', 'args', 'env', 'cwd'].includes(key))
      throw new ConfigError(
        `"${where}" has an unknown key "${key}" (a spawned upstream takes command, args, env, cwd; an HTTP one takes url, headers)`,
      );
  const command = optionalString(spec['command'], `${where}.command`);
  if (command === undefined || command === '')
    throw new ConfigError(`"${where}" needs a "command" to spawn (or a "url" to reach)`);
  const args = spec['args'];
  if (args !== undefined && !(Array.isArray(args) && args.every((arg) => typeof arg === 'string')))
    throw new ConfigError(`"${where}.args" must be an array of strings`);
  const env = spec['env'] === undefined ? undefined : strings(spec['env'], `${where}.env`);
  const cwd = optionalString(spec['cwd'], `${where}.cwd`);
  return {
    command,
    ...(args === undefined ? {} : { args: args }),
    ...(env === undefined ? {} : { env }),
    ...(cwd === undefined ? {} : { cwd: absolute(cwd, directory) }),
  };
}

function readPolicy(value: unknown, where: string): ToolPolicy {
  const policy = object(value, where);
  for (const key of Object.keys(policy))
    if (key !== 'approval' && key !== 'timeoutMs')
      throw new ConfigError(`"${where}" has an unknown key "${key}" (known: approval, timeoutMs)`);
  const approval = policy['approval'];
  if (approval !== undefined && approval !== 'always' && approval !== 'never')
    throw new ConfigError(
      `"${where}.approval" must be "always" or "never" (got ${JSON.stringify(approval)})`,
    );
  const timeoutMs = optionalMs(policy['timeoutMs'], `${where}.timeoutMs`, false);
  return {
    ...(approval === undefined ? {} : { approval }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`"${where}" must be a JSON object`);
  return value as Record<string, unknown>;
}

function strings(value: unknown, where: string): Record<string, string> {
  const entries = Object.entries(object(value, where));
  for (const [key, item] of entries)
    if (typeof item !== 'string') throw new ConfigError(`"${where}.${key}" must be a string`);
  return Object.fromEntries(entries) as Record<string, string>;
}

function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ConfigError(`"${where}" must be a string`);
  return value;
}

function optionalNames(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  const names = Array.isArray(value) ? (value as unknown[]) : [];
  const ok = (name: unknown): name is string =>
    typeof name === 'string' && name.trim() !== '' && name.length <= 128 && !/\p{Cc}/u.test(name);
  if (!Array.isArray(value) || !names.every(ok) || new Set(names).size !== names.length)
    throw new ConfigError(
      `"${where}" must be a list of distinct names (each 1 to 128 printable characters), e.g. ["bob", "carol"]`,
    );
  return names;
}

function optionalMs(value: unknown, where: string, zero: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (!zero && value === 0) ||
    value > 2_147_483_647
  ) {
    throw new ConfigError(`"${where}" must be a number of milliseconds${zero ? '' : ' above 0'}`);
  }
  return value;
}

function absolute(path: string, directory: string): string {
  return isAbsolute(path) ? path : resolve(directory, path);
}
