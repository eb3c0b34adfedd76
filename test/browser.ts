import { inject } from 'vitest';
import { chromium, type Browser } from 'playwright-core';

/**
 * Launches headless Chromium for a browser test. The executable is the one global-setup unpacked from the
 * `@sparticuz/chromium` npm package (or CHROMIUM_PATH when set), so a fresh machine needs no system browser.
 * The flags keep Chromium off the network it cannot reach (background services, component updates).
 * @param extraArgs further Chromium switches, e.g. `--host-resolver-rules=…`.
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: inject('chromiumPath'),
    args: ['--headless', '--no-sandbox', '--no-zygote', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}
