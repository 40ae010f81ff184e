import { Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';

type Turn =
  | { readonly call: { readonly id: string; readonly name: string; readonly arguments: string } }
  | { readonly text: string };

/**
 * A model that plays a script, one turn per model call, and keeps every request (what the agent
 * was told about each call). After the script it says "Done.".
 */
export function scriptedModel(...turns: Turn[]) {
  const requests: ModelRequest[] = [];
  const model: Model = {
    getResponse(request: ModelRequest): Promise<ModelResponse> {
      requests.push(request);
      const turn = turns.shift() ?? { text: 'Done.' };
      const output: ModelResponse['output'] =
        'call' in turn
          ? [
              {
                type: 'function_call',
                callId: turn.call.id,
                name: turn.call.name,
                arguments: turn.call.arguments,
                status: 'completed',
              },
            ]
          : [
              {
                type: 'message',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: turn.text }],
              },
            ];
      return Promise.resolve({ usage: new Usage(), output, responseId: `resp_${requests.length}` });
    },
    getStreamedResponse(): AsyncIterable<never> {
      throw new Error('the scripted model does not stream');
    },
  };
  /** What the agent sent the model as each tool's output, by call id, in its last request. */
  const toolOutputs = (): Record<string, string> => {
    const input = requests.at(-1)?.input;
    const found: Record<string, string> = {};
    if (!Array.isArray(input)) return found;
    for (const item of input) {
      if (item.type === 'function_call_result') found[item.callId] = JSON.stringify(item.output);
    }
    return found;
  };
  return { model, requests, toolOutputs };
}
