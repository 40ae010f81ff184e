import { createToolGate, defineTool, type ToolGate } from '@toolgate/core';
import { act, render, screen } from '@testing-library/react';
import { StrictMode, useMemo } from 'react';
import { describe, expect, it } from 'vitest';
import { ToolGateProvider, useGateTools, useToolCall } from '../src/index.ts';
import { openaiCall } from './shop.tsx';

/** A tool made from a prop: it lists the files of one folder, after a person approves. */
const listFiles = (folder: string) =>
  defineTool({
    name: 'list_files',
    inputSchema: { type: 'object' },
    needsApproval: true,
    execute: () => ({ folder }),
  });

function Call({ id }: { id: string }) {
  const { call } = useToolCall(openaiCall(id, 'list_files', {}));
  const output = call?.status === 'committed' ? (call.output as { folder: string }).folder : '';
  return (
    <li data-testid={id} data-status={call?.status}>
      {output}
    </li>
  );
}

/** The app: its tools follow `folder`, and it shows one call per id in `calls`. */
function FolderChat({ folder, calls }: { folder: string; calls: readonly string[] }) {
  const tools = useMemo(() => [listFiles(folder)], [folder]);
  useGateTools(tools);
  return (
    <ul>
      {calls.map((id) => (
        <Call key={id} id={id} />
      ))}
    </ul>
  );
}

function app(gate: ToolGate, folder: string, calls: readonly string[]) {
  return (
    <StrictMode>
      <ToolGateProvider gate={gate}>
        <FolderChat folder={folder} calls={calls} />
      </ToolGateProvider>
    </StrictMode>
  );
}

describe('useGateTools', () => {
  it('a tool made from a prop follows the prop on the same gate; a call proposed before keeps its definition', async () => {
    const gate = createToolGate({ tools: [listFiles('docs')] });
    const view = render(app(gate, 'docs', ['c1']));
    expect(screen.getByTestId('c1').dataset.status).toBe('awaiting_approval');
    const before = gate.tools[0];

    // The new call is proposed by a child in the very commit that brings the new folder.
    view.rerender(app(gate, 'photos', ['c1', 'c2']));
    expect(gate.tools.map((tool) => tool.name)).toEqual(['list_files']);
    expect(gate.tools[0]).not.toBe(before);

    await act(async () => {
      gate.approve('c1');
      gate.approve('c2');
      await Promise.all([gate.settled('c1'), gate.settled('c2')]);
    });
    expect(screen.getByTestId('c1').textContent).toBe('docs');
    expect(screen.getByTestId('c2').textContent).toBe('photos');
  });

  it('replaces nothing while a render keeps the same definitions', () => {
    const gate = createToolGate({ tools: [listFiles('docs')] });
    const replaced: unknown[] = [];
    const watched: ToolGate = {
      ...gate,
      replaceTools: (tools) => {
        replaced.push(tools);
        gate.replaceTools(tools);
      },
    };
    Object.defineProperty(watched, 'tools', { get: () => gate.tools });
    // The first render brings the component's own definition (made by its useMemo).
    const view = render(app(watched, 'docs', []));
    expect(replaced).toHaveLength(1);
    view.rerender(app(watched, 'docs', ['c1']));
    expect(replaced).toHaveLength(1);
    view.rerender(app(watched, 'docs', ['c1', 'c2']));
    expect(replaced).toHaveLength(1);
  });
});
