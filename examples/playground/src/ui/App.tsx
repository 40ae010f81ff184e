import { ToolGateProvider } from '@toolgate/react';
import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import { useStore } from 'zustand';
import { api, type ModelSettings } from '../chat/api.ts';
import { openConversation, type Conversation } from '../chat/conversation.ts';
import type { ChatMode, Pace } from '../chat/transcript.ts';
import type { Scenario } from '../model/scenarios.ts';
import { ApprovalsPanel } from './approvers/ApprovalsPanel.tsx';
import { AuditTimeline } from './AuditTimeline.tsx';
import { Composer } from './Composer.tsx';
import { ConnectionForm } from './ConnectionForm.tsx';
import { ScenarioList } from './ScenarioList.tsx';
import { ServerStatus, ServerStatusLine } from './ServerStatus.tsx';
import { OutboxPanel } from './approvers/OutboxPanel.tsx';
import { PolicyPanel } from './PolicyPanel.tsx';
import { ProviderCharges } from './ProviderCharges.tsx';
import { ShopPanel } from './ShopPanel.tsx';
import { Spotlight } from './Spotlight.tsx';
import { StateVerdict } from './StateVerdict.tsx';
import { ThemeSwitch } from './ThemeSwitch.tsx';
import { Transcript } from './Transcript.tsx';

/** `?pace=instant` drops the scripted model's and the tools' pretend latency (tests use it). */
const pace: Pace = new URLSearchParams(location.search).get('pace') === 'instant' ? 'instant' : 'realistic';

export function App(): ReactElement {
  const [conversation, setConversation] = useState<Conversation>();
  const [problem, setProblem] = useState<string>();
  const [scenario, setScenario] = useState<string>();
  const [model, setModel] = useState<ModelSettings>({ configured: false });
  // The mode picked, shown at once; the conversation in that mode follows from the server.
  const [picked, setPicked] = useState<ChatMode>();
  // The live conversation, disposed here rather than in an effect: StrictMode replays effects,
  // and a replayed cleanup would stop the feeds of a conversation that is still on screen.
  const current = useRef<Conversation | undefined>(undefined);
  const opening = useRef(0);

  const show = useCallback((next: Conversation) => {
    current.current?.dispose();
    current.current = next;
    setConversation(next);
    setProblem(undefined);
  }, []);

  useEffect(() => {
    // StrictMode runs this twice; only the last run's conversation is shown.
    const attempt = ++opening.current;
    void (async () => {
      try {
        await api.visit();
        const [load, settings] = await Promise.all([api.current(pace), api.model()]);
        if (attempt !== opening.current) return;
        show(openConversation(load));
        setModel(settings);
      } catch (error) {
        if (attempt === opening.current)
          setProblem(
            `The playground's server could not be reached: ${error instanceof Error ? error.message : String(error)}`,
          );
      }
    })();
  }, [show]);

  const restart = useCallback(
    async (mode: ChatMode, prompt?: string) => {
      const attempt = ++opening.current;
      try {
        const next = openConversation(await api.start(pace, mode));
        if (attempt !== opening.current) return next.dispose();
        show(next);
        if (prompt !== undefined) await next.send(prompt);
      } catch (error) {
        setProblem(
          `The playground's server could not be reached: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    },
    [show],
  );

  // A chat left in another tab (its New chat, or a scenario picked there): this tab follows to the
  // chat the visitor has open now, rather than staying where nothing it does can be seen again.
  useEffect(() => {
    if (conversation === undefined) return;
    let shown = true;
    // A chat this tab is leaving itself (New chat, a scenario) is left too: that is already handled.
    const since = opening.current;
    void conversation.left.then(async () => {
      if (!shown || opening.current !== since) return;
      const attempt = ++opening.current;
      try {
        const load = await api.current(pace);
        if (attempt !== opening.current) return;
        setScenario(undefined);
        show(openConversation(load));
      } catch (error) {
        setProblem(
          `The playground's server could not be reached: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
    return () => {
      shown = false;
    };
  }, [conversation, show]);

  const mode: ChatMode = picked ?? conversation?.mode ?? 'scripted';

  const pick = (picked: Scenario) => {
    setScenario(picked.id);
    void restart(mode, picked.prompt);
    // On a narrow screen the chat is below the list: bring the whole of it into view, its top to the
    // top of the screen, so that the calls and their Approve are on screen as they arrive.
    requestAnimationFrame(() => {
      const chat = document.querySelector('[data-testid="chat"]');
      if (
        chat !== null &&
        chat.getBoundingClientRect().top > 0 &&
        chat.getBoundingClientRect().bottom > window.innerHeight
      )
        chat.scrollIntoView({ block: 'start', behavior: 'smooth' });
    });
  };

  const switchMode = (next: ChatMode) => {
    setPicked(next);
    setScenario(undefined);
    void restart(next);
  };

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden="true">
            ✓
          </span>
          <div>
            <h1>
              toolgate <span>playground</span>
            </h1>
            <p className="tagline">A model’s tool call is a proposal, not a permission.</p>
          </div>
        </div>
        <div className="topbar-controls">
          <fieldset className="segmented">
            <legend className="visually-hidden">Model</legend>
            <label>
              <input
                type="radio"
                name="mode"
                value="scripted"
                checked={mode === 'scripted'}
                onChange={() => switchMode('scripted')}
              />
              <span>Scripted, offline</span>
            </label>
            <label>
              <input
                type="radio"
                name="mode"
                value="remote"
                checked={mode === 'remote'}
                onChange={() => switchMode('remote')}
              />
              <span>Your model</span>
            </label>
          </fieldset>
          <ThemeSwitch />
          {conversation === undefined ? (
            <ServerStatusLine
              state={problem === undefined ? 'connecting' : 'closed'}
              lastEventAt={undefined}
            />
          ) : (
            <ToolGateProvider gate={conversation.gate}>
              <ServerStatus />
            </ToolGateProvider>
          )}
        </div>
      </header>

      {problem === undefined ? null : (
        <p className="notice page-problem" role="alert" data-tone="error">
          {problem}
        </p>
      )}

      {conversation === undefined ? (
        <main className="workspace loading" aria-busy="true">
          <p className="transcript-empty">Connecting to the playground’s server…</p>
        </main>
      ) : (
        <ToolGateProvider gate={conversation.gate}>
          <main className="workspace">
            <aside className="sidebar">
              {mode === 'remote' ? (
                <ConnectionForm
                  settings={model}
                  onConnect={async (next) => {
                    setModel(await api.setModel(next));
                    setScenario(undefined);
                    await restart('remote');
                  }}
                />
              ) : null}
              <ScenarioList
                active={scenario}
                onPick={pick}
                heading={mode === 'scripted' ? 'Scenarios' : 'Prompts to try'}
              />
            </aside>
            <Chat
              key={conversation.id}
              conversation={conversation}
              onNewChat={() => {
                setScenario(undefined);
                void restart(mode);
              }}
            />
            <aside className="inspector" aria-label="App state">
              <ShopPanel key={conversation.id} shop={conversation.shop} />
              <ProviderCharges key={`provider-${conversation.id}`} chat={conversation.id} />
              <PolicyPanel chatId={conversation.id} />
              <ApprovalsPanel />
              <OutboxPanel />
              <Spotlight view={conversation.view} />
              <StateVerdict verdict={conversation.verdict} />
              <AuditTimeline key={`audit-${conversation.id}`} feed={conversation.audit} />
            </aside>
          </main>
        </ToolGateProvider>
      )}
    </div>
  );
}

function Chat({
  conversation,
  onNewChat,
}: {
  conversation: Conversation;
  onNewChat: () => void;
}): ReactElement {
  const busy = useStore(conversation.transcript, (state) => state.busy);
  const scripted = conversation.mode === 'scripted';
  return (
    <section
      className="chat"
      aria-labelledby="chat-title"
      data-testid="chat"
      data-busy={busy}
      data-chat-id={conversation.id}
    >
      <div className="chat-head">
        <h2 id="chat-title" className="panel-title">
          Chat <span className="model-label">{conversation.modelLabel}</span>
        </h2>
        <button type="button" className="button quiet small" onClick={onNewChat}>
          New chat
        </button>
      </div>
      <Transcript
        conversation={conversation}
        empty={
          <div className="transcript-empty">
            <p>
              {scripted
                ? 'Pick a scenario, or ask the offline model to send money, add to the cart, show a product, check out, apply a coupon, find a delivery slot or track an order.'
                : 'Say what you want from the shop. Your model sees ten tools; every call it makes goes through a gate.'}
            </p>
            <p>
              The model runs on the playground’s server, and so do the shop’s tools. The shop on the right
              changes only when a call commits.
            </p>
          </div>
        }
      />
      <Composer
        busy={busy}
        onSend={conversation.send}
        onStop={conversation.stop}
        placeholder={scripted ? 'Message the scripted model…' : 'Message your model…'}
      />
    </section>
  );
}
