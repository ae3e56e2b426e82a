import { existsSync } from 'node:fs'
import puppeteer, { type Browser } from 'puppeteer-core'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * Debian's Chromium, headless, for every test that renders a page (`.ci/run` installs it;
 * CHROMIUM_PATH names another): no sandbox (root in CI), nothing that would reach the
 * network on its own (updates, sync, QUIC). @throws when Chromium is not installed.
 */
export async function launchHeadlessChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH`)
  return await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--disable-default-apps',
      '--disable-extensions',
      '--mute-audio'
    ]
  })
}
