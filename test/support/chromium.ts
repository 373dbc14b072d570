import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "#infra/repository-root";

/**
 * A real headless Chromium for the tests that look at a page as a person would: Debian's
 * `chromium` package (.ci/run installs it when missing), or the binary named by CHROMIUM_PATH.
 * Where none exists, those tests are skipped with `chromiumMissing` printed (never silently).
 */
const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter((path): path is string =>
  Boolean(path),
);

export const chromiumPath: string | undefined = candidates.find((path) => existsSync(path));

export const chromiumMissing = `no Chromium found (looked for ${candidates.join(", ")}): install Debian's \`chromium\` package or set CHROMIUM_PATH; the browser tests are skipped`;

if (!chromiumPath) console.warn(chromiumMissing);

/** test-output/ at the repository root (gitignored): screenshots the browser tests take. */
export function testOutputPath(name: string): string {
  const directory = join(repositoryRoot, "test-output");
  mkdirSync(directory, { recursive: true });
  return join(directory, name);
}

export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  // --no-sandbox: CI and these machines run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] });
}
