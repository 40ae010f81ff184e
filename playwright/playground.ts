import { test as base, expect, type Locator, type Page, type TestInfo } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), 'artifacts', 'screenshots');

/** The playground as a visitor sees it, read from the DOM only. */
export class Playground {
  /** The state panel's markup as the page opened, before any call. */
  initialState = '';

  constructor(readonly page: Page) {}

  /** Opens the page (of the suite's server, or of `base`) with the scripted model and the tools answering without pretend latency. */
  async open(query = '?pace=instant', base?: string): Promise<void> {
    await this.page.goto(base === undefined ? `/${query}` : new URL(`/${query}`, base).href);
    await expect(this.page.getByRole('heading', { level: 1 })).toContainText('toolgate');
    await expect(this.verdict).toHaveAttribute('data-verdict', 'idle');
    this.initialState = await this.stateMarkup();
  }

  /** The chat column; its `data-busy` is true while an exchange with the model is running. */
  get chat(): Locator {
    // A test id, not a role query: Playwright polls locators on the page's main thread, and a role
    // query walks the whole DOM, which the flood spec would then measure as the page's own work.
    return this.page.getByTestId('chat');
  }

  get appState(): Locator {
    return this.page.getByTestId('app-state');
  }

  get verdict(): Locator {
    return this.page.getByTestId('state-verdict');
  }

  get calls(): Locator {
    return this.page.getByTestId('tool-call');
  }

  get transcript(): Locator {
    return this.page.getByTestId('transcript');
  }

  get assistantTexts(): Locator {
    return this.page.getByTestId('assistant-text');
  }

  scenario(title: string): Locator {
    return this.page
      .getByRole('navigation', { name: /Scenarios|Prompts to try/ })
      .getByRole('button', { name: title, exact: true });
  }

  /** The `<ToolCallStatus>` of the `index`th call in the transcript. */
  status(index: number): Locator {
    return this.calls.nth(index).locator('[data-toolgate="call"]');
  }

  /** The state panel's markup, for byte-for-byte comparisons. */
  async stateMarkup(): Promise<string> {
    return this.appState.evaluate((element) => element.innerHTML);
  }

  /** Sends a message as a visitor types it. */
  async say(text: string): Promise<void> {
    await this.page.getByLabel('Message').fill(text);
    await this.page.getByLabel('Message').press('Enter');
    await expect(this.transcript.locator('[data-role="user"]').last()).toHaveText(text);
  }

  /** The shop as the playground's server keeps it, for this page's conversation. */
  async serverShop(): Promise<unknown> {
    const chat = await this.chat.getAttribute('data-chat-id');
    return this.page.evaluate(
      async (id) => ((await (await fetch(`/api/chat/${id}/shop`)).json()) as { shop: unknown }).shop,
      chat,
    );
  }

  /** The shop as this page shows it (the raw state of its store). */
  async pageShop(): Promise<unknown> {
    return JSON.parse((await this.page.getByTestId('raw-state').textContent()) ?? 'null') as unknown;
  }

  /** Picks a scenario and waits until its prompt is in the transcript. */
  async run(title: string, prompt: RegExp | string): Promise<void> {
    await this.scenario(title).click();
    await expect(this.transcript.locator('[data-role="user"]').last()).toHaveText(prompt);
  }

  /** Waits until the exchange is over: the model's last turn is in and no call is open. */
  async settled(timeout?: number): Promise<void> {
    await expect(this.chat).toHaveAttribute('data-busy', 'false', timeout === undefined ? {} : { timeout });
  }

  /** The state panel is byte-for-byte what it was when the page opened, and the shop's state never changed. */
  async expectStateUnchanged(): Promise<void> {
    expect(await this.stateMarkup()).toBe(this.initialState);
    await expect(this.verdict).toHaveAttribute('data-changes', '0');
  }

  /** The shop's state changed exactly `count` times, and the panel shows it. */
  async expectChanges(count: number): Promise<void> {
    await expect(this.verdict).toHaveAttribute('data-changes', String(count));
    expect(await this.stateMarkup()).not.toBe(this.initialState);
  }

  /** Keeps a screenshot of the page, or of one element of it (drawn with `style` added), as a test artifact. */
  async screenshot(
    name: string,
    testInfo: TestInfo,
    element?: { of: Locator; style?: string },
  ): Promise<void> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = join(SCREENSHOTS, `${name}.png`);
    await (element?.of ?? this.page).screenshot({ path, style: element?.style ?? '' });
    await testInfo.attach(name, { path, contentType: 'image/png' });
  }
}

/** Playwright's `test`, with a `playground` already open on the offline scripted model. */
export const test = base.extend<{ playground: Playground }>({
  playground: async ({ page }, provide) => {
    const playground = new Playground(page);
    await playground.open();
    await provide(playground);
  },
});

export { expect };
