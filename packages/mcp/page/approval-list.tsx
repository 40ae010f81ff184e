import type { ToolCallRecord } from '@toolgate/core';
import { inputHash } from '@toolgate/core';
import type { RemoteGate } from '@toolgate/core/remote';
import {
  ToolCallStatus,
  ToolCallStatusActions,
  ToolCallStatusInput,
  ToolCallStatusLabel,
  ToolCallStatusReason,
  ToolCallStatusRefusal,
  useToolCalls,
} from '@toolgate/react';
import { useEffect, useState, useSyncExternalStore } from 'react';

const waiting = (call: ToolCallRecord) => call.status === 'awaiting_approval';
const other = (call: ToolCallRecord) => call.status !== 'awaiting_approval';

/** Every call of the gateway's session: those waiting for a decision first, then the rest, newest first. */
export function ApprovalList({
  connection,
  session,
}: {
  connection: RemoteGate['connection'];
  session: string;
}) {
  const open = useToolCalls(waiting);
  const rest = useToolCalls(other);
  const feed = useSyncExternalStore(connection.subscribe, connection.getState, connection.getState);
  return (
    <main>
      <header>
        <h1>Tool calls waiting for you</h1>
        <p className="session">
          MCP gateway session <code>{session}</code> ·{' '}
          <span data-connection={feed.state}>
            {feed.state === 'live'
              ? 'live'
              : `${feed.state}${feed.error === undefined ? '' : `: ${feed.error.message}`}`}
          </span>
        </p>
      </header>
      <section aria-labelledby="waiting-heading">
        <h2 id="waiting-heading">Waiting for a decision ({open.length})</h2>
        {open.length === 0 ? (
          <p className="empty">
            Nothing waits for you. A call that needs your approval appears here as the model makes it.
          </p>
        ) : null}
        {open.map((call) => (
          <CallCard key={call.id} call={call} />
        ))}
      </section>
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">Earlier calls ({rest.length})</h2>
        {[...rest].reverse().map((call) => (
          <CallCard key={call.id} call={call} />
        ))}
      </section>
    </main>
  );
}

/** One call: the tool, the exact input it holds, the hash an approval is bound to, and its status with Approve and Deny. */
function CallCard({ call }: { call: ToolCallRecord }) {
  const hash = useInputHash(call);
  const open = call.status === 'awaiting_approval';
  return (
    <article className="call" data-call-id={call.id} aria-label={`Call to ${call.name}`}>
      <h3>
        <code>{call.name || '(no name)'}</code>
        <time dateTime={new Date(call.history[0]?.at ?? 0).toISOString()}>
          {new Date(call.history[0]?.at ?? 0).toLocaleString()}
        </time>
      </h3>
      <p className="id">
        Call id <code>{call.id}</code>
      </p>
      {/* The input is shown by the status's own part, from the record its Approve sends: Approve is
          enabled only once it is on screen. */}
      <ToolCallStatus id={call.id} call={call}>
        <ToolCallStatusInput>
          {(input) => (
            <>
              <p className="label">{open ? 'Input, exactly as the tool will receive it:' : 'Input:'}</p>
              <pre className="input" data-testid="input">
                {JSON.stringify(input, null, 2)}
              </pre>
              <p className="hash">
                SHA-256 of this input: <code data-testid="input-hash">{hash ?? '…'}</code>
                {open ? (
                  <>
                    <br />
                    Approving sends this hash; the gateway runs the call only with the input it names, once.
                  </>
                ) : null}
              </p>
            </>
          )}
        </ToolCallStatusInput>
        <ToolCallStatusLabel />
        <ToolCallStatusReason />
        <ToolCallStatusRefusal />
        <ToolCallStatusActions />
      </ToolCallStatus>
    </article>
  );
}

function useInputHash(call: ToolCallRecord): string | undefined {
  const [hash, setHash] = useState<{ input: unknown; hash: string }>();
  useEffect(() => {
    if (call.input === undefined) return;
    let live = true;
    const input = call.input;
    void inputHash(input).then((value) => live && setHash({ input, hash: value }));
    return () => {
      live = false;
    };
  }, [call.input]);
  return hash !== undefined && hash.input === call.input ? hash.hash : undefined;
}
