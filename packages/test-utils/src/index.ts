// The workspace's test helpers, shared by every package's tests; private, never published.
export { createFakeClock, type FakeClock } from './clock.ts';
export { deferred, type Deferred } from './deferred.ts';
export { errorLog, when } from './when.ts';
export { args, chargeSchema, chargeTool, createShop, watchStore, type Shop } from './shop.ts';
export {
  startLoopbackServer,
  wireRecord,
  type LoopbackServer,
  type ReceivedRequest,
  type WireEvent,
} from './remote-server.ts';
export {
  createWorkspace,
  getTime,
  getWeather,
  listTickets,
  searchDocs,
  writeFile,
  type Workspace,
} from './tools.ts';
export { DEFECTS, WRAPPER } from './defects.ts';
export {
  chatChunk,
  chatStream,
  fragments,
  interleave,
  streamedCall,
  type ToolCallDelta,
} from './openai-chunks.ts';
export {
  startReplayServer,
  type RecordedRequest,
  type ReplayServer,
  type SseEvent,
} from './replay-server.ts';
