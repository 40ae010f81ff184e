import { createInterface } from 'node:readline';

/**
 * The protocol between a test and the gate process it started: one JSON request a line on stdin,
 * each answered by one JSON line on stdout that carries the request's `ref` (answers may come out
 * of order, since requests run at once); `{ "op": "exit" }` ends it. Prints `{ "ready": true }`
 * once it listens, and resolves when stdin closes, for the process to close its gate and ledger.
 * `errorOf` says how a failed request is answered, as the test reads it.
 */
export async function serveLines(
  answer: (request: Record<string, unknown>) => Promise<object>,
  errorOf: (error: unknown) => unknown,
): Promise<void> {
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => {
    const request = JSON.parse(line) as Record<string, unknown>;
    if (request['op'] === 'exit') {
      input.close();
      process.stdin.destroy();
      return;
    }
    answer(request).then(
      (result) => console.log(JSON.stringify({ ref: request['ref'], ...result })),
      (error: unknown) => console.log(JSON.stringify({ ref: request['ref'], error: errorOf(error) })),
    );
  });
  console.log(JSON.stringify({ ready: true }));
  await new Promise((resolve) => input.on('close', resolve));
}
