import { createRemoteGate, type RemoteGate } from '@toolgate/core/remote';
import { ApprovalInbox, ToolGateProvider } from '@toolgate/react';
import { useEffect, useState, type ReactElement } from 'react';
import { TOOLGATE_URL } from '../../chat/api.ts';

/** Whom the page is seen as: the visitor, or one of the approvers this demo lets the browser play. */
type Viewer = 'you' | 'manager' | 'finance';

const VIEWERS: readonly { readonly value: Viewer; readonly label: string }[] = [
  { value: 'you', label: 'you' },
  { value: 'manager', label: 'the manager' },
  { value: 'finance', label: 'finance' },
];

const EMPTY: Readonly<Record<Exclude<Viewer, 'you'>, string>> = {
  manager: 'Nothing waits for the manager.',
  finance: 'Nothing waits for finance. A large transfer reaches finance 40 s after it began to wait.',
};

/**
 * The approver's side: `<ApprovalInbox />` over a remote gate that follows an inbox
 * (`createRemoteGate({ baseUrl, inbox: true })`, the server's `GET /api/toolgate/approvals/events`
 * for that principal), seen as the manager or finance. As the visitor, no inbox is opened: nothing
 * in this shop asks the visitor by name, and each open feed holds one of the few connections a
 * browser keeps to a server.
 */
export function ApprovalsPanel(): ReactElement {
  const [viewer, setViewer] = useState<Viewer>('you');
  return (
    <section className="approvals-view" aria-labelledby="approvals-title" data-testid="approvals">
      <h2 id="approvals-title" className="panel-title">
        Approvals
      </h2>
      <fieldset className="segmented viewer">
        <legend>View as</legend>
        {VIEWERS.map(({ value, label }) => (
          <label key={value}>
            <input
              type="radio"
              name="viewer"
              value={value}
              checked={viewer === value}
              onChange={() => setViewer(value)}
            />
            <span>{label}</span>
          </label>
        ))}
      </fieldset>
      <p className="policy-note">
        A demo: this browser plays the manager and finance too, and the server takes the page’s word for who
        it is. A real app signs them in.
      </p>
      {viewer === 'you' ? (
        <p className="approvals-you" data-testid="approvals-you">
          Nothing in this shop asks you by name: your own transfers and wires wait on their cards in the chat.
          A large transfer is your manager’s to approve.
        </p>
      ) : (
        <Inbox key={viewer} viewer={viewer} />
      )}
    </section>
  );
}

/** One approver's inbox, live, for as long as it is shown. */
function Inbox({ viewer }: { viewer: Exclude<Viewer, 'you'> }): ReactElement {
  // Made in the effect, so StrictMode's second run opens a gate of its own rather than showing a closed one.
  const [gate, setGate] = useState<RemoteGate>();
  useEffect(() => {
    const opened = createRemoteGate({
      baseUrl: TOOLGATE_URL,
      inbox: true,
      headers: { 'x-playground-as': viewer },
    });
    let shown = true;
    queueMicrotask(() => shown && setGate(opened));
    return () => {
      shown = false;
      opened.close();
    };
  }, [viewer]);
  if (gate === undefined) return <p className="policy-note">Opening the inbox…</p>;
  return (
    <ToolGateProvider gate={gate}>
      <ApprovalInbox
        data-viewer={viewer}
        labels={{
          inboxTitle: `Waiting for ${viewer === 'manager' ? 'the manager' : 'finance'}`,
          inboxEmpty: EMPTY[viewer],
        }}
      />
    </ToolGateProvider>
  );
}
