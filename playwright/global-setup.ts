import { startLoopbackModel } from './loopback-model.ts';

/** Starts the loopback model server for the real-model specs; Playwright calls the returned teardown at the end. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const model = await startLoopbackModel();
  process.env.LOOPBACK_MODEL_URL = model.url;
  return model.close;
}
