import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp, contentType } from './build-app.ts';

// The default look in a production build: a new Vite + React app that declares no `color-scheme`,
// built by `vite build` with Vite's defaults (its CSS minifier lowers colour functions that the
// default browser targets lack), then shown in Chromium in light and in dark.
const app = fileURLToPath(new URL('./app/', import.meta.url));
const ORIGIN = 'http://app.localhost';

let files: Map<string, string | Uint8Array>;
test.beforeAll(async () => {
  files = await buildApp(app);
});

async function open(page: Page): Promise<void> {
  await page.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    const body = files.get(path === '/' ? '/index.html' : path);
    if (body === undefined) return route.fulfill({ status: 404 });
    return route.fulfill({ status: 200, contentType: contentType(path), body: Buffer.from(body) });
  });
  await page.goto(`${ORIGIN}/`);
}

/** The colours a person sees on the card waiting for them. */
async function colours(page: Page) {
  const card = page.locator('[data-toolgate="call"][data-status="awaiting_approval"]');
  const style = (locator: ReturnType<Page['locator']>) =>
    locator.evaluate((element) => {
      const computed = getComputedStyle(element);
      return {
        color: computed.color,
        background: computed.backgroundColor,
        border: computed.borderInlineStartColor,
      };
    });
  return {
    approve: await style(card.getByRole('button', { name: 'Approve' })),
    deny: await style(card.getByRole('button', { name: 'Deny' })),
    card: await style(card),
  };
}

test('a production build of an app without a color-scheme shows Approve, Deny and the status colours, light and dark', async ({
  page,
}) => {
  // The app itself says nothing about light or dark: only the stylesheet decides.
  for (const name of ['index.html', 'main.js'])
    expect(readFileSync(`${app}${name}`, 'utf8')).not.toContain('color-scheme');
  await page.emulateMedia({ colorScheme: 'light' });
  await open(page);
  await expect(page.getByRole('button', { name: 'Approve' })).toBeVisible();
  await expect
    .poll(() => colours(page))
    .toEqual({
      approve: { color: 'rgb(255, 255, 255)', background: 'rgb(31, 136, 61)', border: 'rgba(0, 0, 0, 0)' },
      deny: { color: 'rgb(207, 34, 46)', background: 'rgb(246, 248, 250)', border: 'rgb(209, 217, 224)' },
      card: { color: 'rgb(31, 35, 40)', background: 'rgb(255, 255, 255)', border: 'rgb(154, 103, 0)' },
    });

  // The card's border eases from one colour to the next (a 150 ms transition): read it once it is there.
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect
    .poll(() => colours(page))
    .toEqual({
      approve: { color: 'rgb(255, 255, 255)', background: 'rgb(35, 134, 54)', border: 'rgba(0, 0, 0, 0)' },
      deny: { color: 'rgb(248, 81, 73)', background: 'rgb(33, 40, 48)', border: 'rgb(61, 68, 77)' },
      card: { color: 'rgb(230, 237, 243)', background: 'rgb(21, 27, 35)', border: 'rgb(210, 153, 34)' },
    });
});
