import { ToolGateProvider } from '@toolgate/react';
import { useCallback, useRef, useState, type ReactElement } from 'react';
import { useStore } from 'zustand';
import { loadSettings, saveSettings, type ConnectionSettings } from '../chat/connection-settings.ts';
import { startConversation, type Conversation } from '../chat/conversation.ts';
import type { ModelConnection } from '../chat/model-connection.ts';
import type { Scenario } from '../model/scenarios.ts';
import type { ScriptedPace } from '../model/scripted-fetch.ts';
import { INSTANT_TIMING, REALISTIC_TIMING } from '../shop/tool-timing.ts';
import { AuditTimeline } from './AuditTimeline.tsx';
import { Composer } from './Composer.tsx';
import { ConnectionForm } from './ConnectionForm.tsx';
import { ScenarioList } from './ScenarioList.tsx';
import { ShopPanel } from './ShopPanel.tsx';
import { StateVerdict } from './StateVerdict.tsx';
import { ThemeSwitch } from './ThemeSwitch.tsx';
import { Transcript } from './Transcript.tsx';

type Mode = 'scripted' | 'remote';

/** `?pace=instant` drops the scripted model's and the tools' pretend latency (tests use it). */
const pace: ScriptedPace = new URLSearchParams(location.search).get('pace') === 'instant' ? 'instant' : 'realistic';
const timing = pace === 'instant' ? INSTANT_TIMING : REALISTIC_TIMING;

function connectionFor(mode: Mode, settings: ConnectionSettings): ModelConnection {
  return mode === 'scripted' ? { kind: 'scripted', pace } : { kind: 'remote', baseURL: settings.baseURL, model: settings.model, apiKey: settings.apiKey };
}

export function App(): ReactElement {
  const [mode, setMode] = useState<Mode>('scripted');
  const [settings, setSettings] = useState(loadSettings);
  const [conversation, setConversation] = useState(() => startConversation(connectionFor('scripted', settings), timing));
  const [scenario, setScenario] = useState<string>();
  // The live conversation, disposed here rather than in an effect: StrictMode replays effects,
  // and a replayed cleanup would stop the watchers of a conversation that is still on screen.
  const current = useRef(conversation);

  const restart = useCallback((connection: ModelConnection, prompt?: string) => {
    current.current.dispose();
    const next = startConversation(connection, timing);
    current.current = next;
    setConversation(next);
    if (prompt !== undefined) void next.session.send(prompt);
  }, []);

  const pick = (picked: Scenario) => {
    setScenario(picked.id);
    restart(connectionFor(mode, settings), picked.prompt);
    // On a narrow screen the chat is below the list: bring it into view.
    requestAnimationFrame(() => document.getElementById('chat-title')?.scrollIntoView({ block: 'nearest', behavior: 'smooth' }));
  };

  const switchMode = (next: Mode) => {
    setMode(next);
    setScenario(undefined);
    restart(connectionFor(next, settings));
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
              <input type="radio" name="mode" value="scripted" checked={mode === 'scripted'} onChange={() => switchMode('scripted')} />
              <span>Scripted, offline</span>
            </label>
            <label>
              <input type="radio" name="mode" value="remote" checked={mode === 'remote'} onChange={() => switchMode('remote')} />
              <span>Your model</span>
            </label>
          </fieldset>
          <ThemeSwitch />
        </div>
      </header>

      <ToolGateProvider gate={conversation.gate}>
        <main className="workspace">
          <aside className="sidebar">
            {mode === 'remote' ? (
              <ConnectionForm
                settings={settings}
                onConnect={(next) => {
                  saveSettings(next);
                  setSettings(next);
                  setScenario(undefined);
                  restart(connectionFor('remote', next));
                }}
              />
            ) : null}
            <ScenarioList active={scenario} onPick={pick} heading={mode === 'scripted' ? 'Scenarios' : 'Prompts to try'} />
          </aside>
          <Chat key={conversation.id} conversation={conversation} mode={mode} onNewChat={() => {
            setScenario(undefined);
            restart(connectionFor(mode, settings));
          }} />
          <aside className="inspector" aria-label="App state">
            <ShopPanel key={conversation.id} shop={conversation.shop} />
            <StateVerdict verdict={conversation.verdict} />
            <AuditTimeline key={`audit-${conversation.id}`} feed={conversation.audit} />
          </aside>
        </main>
      </ToolGateProvider>
    </div>
  );
}

function Chat({ conversation, mode, onNewChat }: { conversation: Conversation; mode: Mode; onNewChat: () => void }): ReactElement {
  const busy = useStore(conversation.session.transcript, (state) => state.busy);
  return (
    <section className="chat" aria-labelledby="chat-title" data-testid="chat" data-busy={busy}>
      <div className="chat-head">
        <h2 id="chat-title" className="panel-title">
          Chat <span className="model-label">{conversation.modelLabel}</span>
        </h2>
        <button type="button" className="button quiet small" onClick={onNewChat}>
          New chat
        </button>
      </div>
      <Transcript
        session={conversation.session}
        audit={conversation.audit}
        empty={
          <div className="transcript-empty">
            <p>
              {mode === 'scripted'
                ? 'Pick a scenario, or ask the offline model to check out, add to the cart, send money, apply a coupon, find a delivery slot or track an order.'
                : 'Say what you want from the shop. Your model sees six tools; every call it makes goes through the gate.'}
            </p>
            <p>The shop on the right changes only when a call commits.</p>
          </div>
        }
      />
      <Composer
        busy={busy}
        onSend={(text) => void conversation.session.send(text)}
        onStop={conversation.session.stop}
        placeholder={mode === 'scripted' ? 'Message the scripted model…' : 'Message your model…'}
      />
    </section>
  );
}
