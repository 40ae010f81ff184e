import { useId, useRef, useState, type ReactElement } from 'react';
import type { ModelSettings } from '../chat/api.ts';

const REMEMBERED = 'toolgate-playground:connection';

/** The base URL and model name from the last visit: they are no secret, so this browser keeps them. */
function remembered(): { baseURL: string; model: string } {
  try {
    const saved = JSON.parse(localStorage.getItem(REMEMBERED) ?? '{}') as Partial<
      Record<'baseURL' | 'model', unknown>
    >;
    return {
      baseURL: typeof saved.baseURL === 'string' ? saved.baseURL : 'http://127.0.0.1:11434/v1',
      model: typeof saved.model === 'string' ? saved.model : 'llama3.1',
    };
  } catch {
    return { baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.1' };
  }
}

function remember(settings: { baseURL: string; model: string }): void {
  try {
    localStorage.setItem(REMEMBERED, JSON.stringify(settings));
  } catch {
    // Storage can be off (private windows); the settings still work for this visit.
  }
}

/**
 * Where the visitor's model is: any server that speaks the OpenAI Chat Completions API. The key
 * is sent to the playground's server once and kept in its memory; the field is emptied at once,
 * and the page never holds it again (nothing is stored, nothing is sent back).
 */
export function ConnectionForm({
  settings,
  onConnect,
}: {
  settings: ModelSettings;
  onConnect: (settings: { baseURL: string; model: string; apiKey: string }) => Promise<void>;
}): ReactElement {
  const [draft, setDraft] = useState(() =>
    settings.configured ? { baseURL: settings.baseURL, model: settings.model } : remembered(),
  );
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string>();
  // The key is read from the field once, on submit, and never kept in React state.
  const key = useRef<HTMLInputElement>(null);
  const id = useId();
  const field = (name: string) => `${id}-${name}`;
  return (
    <form
      className="connection"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        const input = key.current;
        const apiKey = input?.value ?? '';
        if (input !== null) input.value = '';
        setSending(true);
        setError(undefined);
        const sent = { ...draft };
        onConnect({ ...sent, apiKey })
          // Remembered only once the server has taken it: a refused setting is not offered again.
          .then(() => remember(sent))
          .catch((problem: unknown) => setError(problem instanceof Error ? problem.message : String(problem)))
          .finally(() => setSending(false));
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
      <input
        id={field('model')}
        required
        value={draft.model}
        placeholder="gpt-4.1-mini"
        onChange={(event) => setDraft({ ...draft, model: event.target.value })}
      />
      <label htmlFor={field('apiKey')}>API key</label>
      <input
        id={field('apiKey')}
        ref={key}
        type="password"
        autoComplete="off"
        placeholder={
          settings.configured && settings.hasKey
            ? 'held by the server; type to replace it'
            : 'not needed for most local servers'
        }
      />
      <p className="hint">
        The playground’s server calls your model; the key goes to it once and stays in its memory, never in
        this page or its storage. A restart of the server forgets it.
      </p>
      {error === undefined ? null : (
        <p className="hint error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={sending}>
        Use this model
      </button>
    </form>
  );
}
