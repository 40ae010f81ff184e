import { useState, type FormEvent, type ReactElement } from 'react';

/** The message box. Enter sends, Shift+Enter starts a new line; while the model works, Stop replaces Send. */
export function Composer({ busy, onSend, onStop, placeholder }: { busy: boolean; onSend: (text: string) => void; onStop: () => void; placeholder: string }): ReactElement {
  const [text, setText] = useState('');
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const message = text.trim();
    if (message === '' || busy) return;
    onSend(message);
    setText('');
  };
  return (
    <form className="composer" onSubmit={submit}>
      <label htmlFor="composer-input" className="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-input"
        rows={2}
        value={text}
        placeholder={placeholder}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) submit(event);
        }}
      />
      {busy ? (
        <button type="button" className="button danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="button primary" disabled={text.trim() === ''}>
          Send
        </button>
      )}
    </form>
  );
}
