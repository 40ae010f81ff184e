import { useChat } from '@ai-sdk/react';
import { ToolCallStatus, toolgateSendAutomaticallyWhen } from '@toolgate/ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useState } from 'react';
import type { ChatMessage } from '../server/route.ts';
import { useSaveChat, useSavedChat } from './saved-chat.ts';

export default function Chat() {
  const saved = useSavedChat<ChatMessage>();
  const { messages, sendMessage, addToolApprovalResponse } = useChat<ChatMessage>({
    ...saved,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: toolgateSendAutomaticallyWhen,
  });
  useSaveChat(saved.id, messages);
  const [input, setInput] = useState('');

  return (
    <div className="chat">
      <div className="messages">
        {messages.map((m) => (
          <div key={m.id} className={`message ${m.role}`}>
            <strong>{`${m.role}: `}</strong>
            {m.parts.map((part, i) => {
              if (part.type === 'text') return <div key={i}>{part.text}</div>;
              if (part.type === 'tool-getWeatherInformation' || part.type === 'tool-processPayment') {
                const asked =
                  part.type === 'tool-getWeatherInformation'
                    ? `Get weather information for ${part.input?.city}?`
                    : `Pay $${part.input?.amount} to ${part.input?.recipient}?`;
                return (
                  <div
                    key={part.toolCallId}
                    className="tool"
                    data-tool-call={part.toolCallId}
                    data-state={part.state}
                  >
                    {part.state === 'approval-requested' && (
                      <div className="approval">
                        {asked}
                        <div>
                          <button
                            onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: true })}
                          >
                            Approve
                          </button>
                          <button
                            onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: false })}
                          >
                            Deny
                          </button>
                        </div>
                      </div>
                    )}
                    {part.state === 'output-available' && (
                      <div className="output">
                        {part.type === 'tool-getWeatherInformation'
                          ? `Weather in ${part.input.city}: ${part.output}`
                          : part.output}
                      </div>
                    )}
                    {part.state === 'output-denied' && (
                      <div className="denied">{asked.replace(/\?$/, '')}: denied.</div>
                    )}
                    <ToolCallStatus part={part} chat={{ messages, addToolApprovalResponse }} />
                  </div>
                );
              }
              return null;
            })}
          </div>
        ))}
      </div>

      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (input.trim()) {
            void sendMessage({ text: input });
            setInput('');
          }
        }}
      >
        <input
          value={input}
          placeholder="Say something..."
          aria-label="Message"
          onChange={(e) => setInput(e.target.value)}
        />
      </form>
    </div>
  );
}
