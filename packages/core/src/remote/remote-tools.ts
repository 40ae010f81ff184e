import { checkToolList } from '../tool/tool-list.ts';
import { createToolVersions } from '../tool/tool-versions.ts';
import type { ToolDefinition } from '../tool/tool.ts';

/**
 * A remote gate's tools: the definitions whose `commit` brings a committed call's output into the
 * page's store. `replaceTools` changes them for calls the page sees from then on; a call it had
 * already seen, not yet ended, is committed with the definition it had.
 *
 * @example
 * const tools = createRemoteTools([addToCart], store !== undefined);
 * tools.definition('add_to_cart', 'call_1')?.commit?.(state, output, input);
 */
export interface RemoteTools {
  readonly list: () => readonly ToolDefinition[];
  readonly definition: (name: string, id: string) => ToolDefinition | undefined;
  /** Throws, and changes nothing, when `tools` is not a valid set for this gate. */
  readonly replace: (tools: unknown, open: Iterable<string>) => void;
  readonly release: (id: string) => void;
}

interface Version {
  readonly tools: readonly ToolDefinition[];
  readonly byName: ReadonlyMap<string, ToolDefinition>;
}

/**
 * Builds a remote gate's tools; throws at once for a set it could not use.
 *
 * @example
 * const tools = createRemoteTools(options.tools, options.store !== undefined);
 */
export function createRemoteTools(first: unknown, hasStore: boolean): RemoteTools {
  function version(tools: unknown, where: string): Version {
    checkToolList(tools, where);
    for (const tool of tools) {
      if (tool.commit && !hasStore) {
        throw new Error(
          `${where}: tool "${tool.name}" has a commit but the gate has no store; pass your Zustand store as \`store\`.`,
        );
      }
    }
    return { tools, byName: new Map(tools.map((tool) => [tool.name, tool])) };
  }
  const versions = createToolVersions(version(first, 'createRemoteGate'));
  return {
    list: () => versions.current().tools,
    definition: (name, id) => versions.of(id).byName.get(name),
    // A copy: the app may change its own array later without changing the gate's tools.
    replace: (tools, open) =>
      versions.replace(
        version(Array.isArray(tools) ? [...(tools as unknown[])] : tools, 'gate.replaceTools'),
        open,
      ),
    release: versions.release,
  };
}
