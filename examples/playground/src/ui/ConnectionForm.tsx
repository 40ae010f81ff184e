import { useId, useState, type ReactElement } from 'react';
import type { ConnectionSettings } from '../chat/connection-settings.ts';

/**
 * Where the real model is: any server that speaks the OpenAI Chat Completions API (OpenAI,
 * llama.cpp's server, Ollama, vLLM). The key stays in memory unless the visitor opts in.
 */
export function ConnectionForm({ settings, onConnect }: { settings: ConnectionSettings; onConnect: (settings: ConnectionSettings) => void }): ReactElement {
  const [draft, setDraft] = useState(settings);
  const id = useId();
  const field = (name: keyof ConnectionSettings) => `${id}-${name}`;
  return (
    <form
      className="connection"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        onConnect(draft);
      }}
    >
      <h2 id={`${id}-title`} className="panel-title">
        Your model
      </h2>
      <label htmlFor={field('baseURL')}>Base URL</label>
      <input
        id={field('baseURL')}
        type="url"
        required
        value={draft.baseURL}
        placeholder="https://api.openai.com/v1"
        onChange={(event) => setDraft({ ...draft, baseURL: event.target.value })}
      />
      <label htmlFor={field('model')}>Model</label>
      <input id={field('model')} required value={draft.model} placeholder="gpt-4.1-mini" onChange={(event) => setDraft({ ...draft, model: event.target.value })} />
      <label htmlFor={field('apiKey')}>API key</label>
      <input
        id={field('apiKey')}
        type="password"
        autoComplete="off"
        value={draft.apiKey}
        placeholder="not needed for most local servers"
        onChange={(event) => setDraft({ ...draft, apiKey: event.target.value })}
      />
      <label className="check">
        <input type="checkbox" checked={draft.rememberKey} onChange={(event) => setDraft({ ...draft, rememberKey: event.target.checked })} />
        Remember the key on this device
      </label>
      <p className="hint">
        {draft.rememberKey ? 'The key will be saved in this browser’s local storage.' : 'The key is kept in memory only and forgotten when you reload.'} Requests go
        straight from this page to the server, which must allow cross-origin requests.
      </p>
      <button type="submit" className="button primary">
        Use this model
      </button>
    </form>
  );
}
