import { existsSync } from 'node:fs'
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * Debian's Chromium, headless, for every test that renders a page (`.ci/run` installs it;
 * CHROMIUM_PATH names another): no sandbox (root in CI), nothing that would reach the
 * network on its own (updates, sync, QUIC). `args`: more switches (as
 * `--host-resolver-rules=MAP name 127.0.0.1`, to reach the service by a name that is not loopback).
 * @throws when Chromium is not installed.
 */
export async function launchHeadlessChromium(args: string[] = []): Promise<Browser> {
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
      '--mute-audio',
      ...args
    ]
  })
}

/**
 * How long a page's navigations and waits may take in a test (ms): far above what a page
 * needs on a quiet machine, so that a 2-core machine running six test files beside Chromium
 * (CI) is never mistaken for a page that does not load (puppeteer's default is 30 s).
 */
const PAGE_TIMEOUT_MS = 120_000

/** A new page of `owner` (a browser or a browser context) with the tests' timeouts (PAGE_TIMEOUT_MS). */
export async function openPage(owner: Browser | BrowserContext): Promise<Page> {
  const page = await owner.newPage()
  page.setDefaultTimeout(PAGE_TIMEOUT_MS)
  page.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS)
  return page
}
