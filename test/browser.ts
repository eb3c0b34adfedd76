import fs from 'node:fs';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Launches headless Chromium for a browser test. The executable is the one global-setup unpacked from the
 * `@sparticuz/chromium` npm package (or CHROMIUM_PATH when set), so a fresh machine needs no system browser.
 * The flags keep Chromium off the network it cannot reach (background services, component updates).
 * A browser that cannot start fails the test with the reason: a browser test never passes or skips unrun.
 * @param extraArgs further Chromium switches, e.g. `--host-resolver-rules=…`.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const executablePath = inject('chromiumPath');
  if (!executablePath || !fs.existsSync(executablePath)) {
    const why = inject('chromiumError') || `no executable at ${JSON.stringify(executablePath)}`;
    throw new Error(
      `Browser tests need Chromium, and there is none (${why}). Set CHROMIUM_PATH to a Chromium executable or reinstall @sparticuz/chromium.`,
    );
  }
  try {
    return await chromium.launch({
      executablePath,
      args: [
        '--headless',
        '--no-sandbox',
        '--no-zygote',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        ...extraArgs,
      ],
    });
  } catch (err) {
    throw new Error(`Browser tests need Chromium, and ${executablePath} did not start: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Runs axe-core (WCAG 2.1 A and AA rules) on the page; fails on serious or critical violations (labels, colour
 * contrast, ...). With `{ strict: true }` it fails on any violation, minor and moderate ones included, and runs axe's
 * best practices too (landmarks, heading order, one main heading, every content inside a landmark).
 */
export async function expectAccessible(page: Page, what: string, opts: { strict?: boolean } = {}) {
  await page.addScriptTag({ path: path.resolve('node_modules/axe-core/axe.min.js') });
  const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', ...(opts.strict ? ['best-practice'] : [])];
  const result = await page.evaluate(
    async (values) => (window as any).axe.run(document, { runOnly: { type: 'tag', values } }),
    tags,
  );
  const bad = (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>)
    .filter((v) => opts.strict || v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `axe violations on ${what}`).toEqual([]);
  const checked = (result.passes as Array<{ id: string }>)
    .map((p) => p.id)
    .concat((result.inapplicable as Array<{ id: string }>).map((p) => p.id));
  expect(checked).toContain('color-contrast');
  expect(checked).toContain('label');
}

/**
 * Saves a full-page screenshot of `page` as `test-results/<name>.png` when `BROWSER_SCREENSHOTS=1`, for a person to
 * look at the pages a browser test went through (no test asserts on them). Off by default: encoding a full-page PNG
 * costs Chromium about as much CPU as loading the page, and the browser tests take about forty of them.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.BROWSER_SCREENSHOTS !== '1') return;
  fs.mkdirSync('test-results', { recursive: true });
  await page.screenshot({ path: path.resolve('test-results', `${name}.png`), fullPage: true });
}
