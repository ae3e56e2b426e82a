import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, ElementHandle, HTTPRequest, Page } from 'puppeteer-core'
import type { Test } from 'tap'
import { launchHeadlessChromium, openPage } from './chromium.ts'
import { waitUntil } from './eventstore-contract.ts'
import { CONSOLE_DIST } from '../../src/http/routes/console.ts'

/** Headless Debian Chromium for the console's end-to-end tests (`.ci/run` installs it). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(`${CONSOLE_DIST}index.html`)) throw new Error('the console is not built: npm test builds it (node scripts/build.ts)')
  return await launchHeadlessChromium()
}

/** What a console page did that a test judges: requests elsewhere, policy violations, script errors, failing answers. */
export interface Watched {
  page: Page
  /** Requests to another origin (aborted before they left), with their resource type. */
  foreign: Array<{ url: string; type: string }>
  /** Content Security Policy violations the page reported. */
  csp: string[]
  /** Uncaught script errors. */
  errors: string[]
  /** Answers of 400 and above, in order. */
  failing: Array<{ method: string; url: string; status: number }>
  /** Every request the page made to its origin, in order. */
  requests: Array<{ method: string; url: string }>
  /** Requests sent and not yet answered (or failed). */
  inFlight: () => string[]
  close: () => Promise<void>
}

/**
 * A fresh browser profile (its own cookies and storage) with one page at `width` × 900 px,
 * watched: any request to another origin is recorded and aborted (the console must make
 * none), every CSP violation, script error and
 * failing answer is recorded. `allowNavigation` lets one top-level navigation elsewhere be
 * recorded (a checkout redirect) without counting it as the console's own request.
 */
export async function openConsole(browser: Browser, base: string, options: { width?: number } = {}): Promise<Watched> {
  const context = await browser.createBrowserContext()
  const page = await openPage(context)
  const width = options.width ?? 1440
  await page.setViewport({ width, height: width < 600 ? 844 : 900, isMobile: width < 600, hasTouch: width < 600 })
  const origin = new URL(base).origin
  const pending = new Set<HTTPRequest>()
  const w: Watched = {
    page,
    foreign: [],
    csp: [],
    errors: [],
    failing: [],
    requests: [],
    inFlight: () => [...pending].map(r => r.url()),
    close: async () => {
      await context.close().catch(() => undefined)
    }
  }
  page.on('request', r => {
    pending.add(r)
  })
  page.on('requestfinished', r => {
    pending.delete(r)
  })
  page.on('requestfailed', r => {
    pending.delete(r)
  })
  // A navigation abandons what the page before it had in flight.
  page.on('framenavigated', frame => {
    if (frame === page.mainFrame()) for (const r of pending) if (r.isNavigationRequest() === false && r.frame() === frame) pending.delete(r)
  })
  await page.setRequestInterception(true)
  page.on('request', request => {
    const url = request.url()
    if (url.startsWith('data:') || url.startsWith('blob:')) {
      void request.continue()
      return
    }
    if (new URL(url).origin !== origin) {
      w.foreign.push({ url, type: request.resourceType() })
      void request.abort('blockedbyclient')
      return
    }
    w.requests.push({ method: request.method(), url })
    void request.continue()
  })
  page.on('response', response => {
    if (response.status() >= 400) w.failing.push({ method: response.request().method(), url: response.url(), status: response.status() })
  })
  page.on('pageerror', error => {
    w.errors.push(String((error as Error).message ?? error))
  })
  await page.exposeFunction('__cspViolation', (text: string) => {
    w.csp.push(text)
  })
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', e => {
      ;(window as unknown as { __cspViolation: (s: string) => void }).__cspViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`)
    })
  })
  return w
}

/** Waits until the page has had no request in flight for 200 ms (60 s at most): what it loads has arrived. */
export async function settle(w: Watched): Promise<void> {
  const deadline = Date.now() + 60_000
  let quietSince = Date.now()
  while (Date.now() - quietSince < 200) {
    if (Date.now() > deadline) throw new Error(`the page never settled: in flight ${w.inFlight().join(', ')}`)
    if (w.inFlight().length > 0) quietSince = Date.now()
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/** Fails `t` for anything the console must never do: a request elsewhere, a CSP violation, an uncaught error. */
export function assertClean(t: Test, w: Watched, what: string): void {
  t.same(w.foreign, [], `${what}: no request left the service's origin`)
  t.same(w.csp, [], `${what}: no Content Security Policy violation`)
  t.same(w.errors, [], `${what}: no uncaught script error`)
}

/** A screenshot of a page at a failure, for the person reading the test's output (in the OS's temporary directory). */
async function evidence(page: Page): Promise<string> {
  const file = join(tmpdir(), `console-failure-${process.pid}-${Date.now()}.png`)
  await page.screenshot({ path: file as `${string}.png`, fullPage: true }).catch(() => undefined)
  return file
}

/** The page's visible text. */
export async function textOf(page: Page): Promise<string> {
  return await page.evaluate(() => document.body.innerText)
}

/** Waits until the page's visible text matches `pattern` (10 s). */
export async function waitForText(page: Page, pattern: RegExp, timeout = 60_000): Promise<void> {
  try {
    await page.waitForFunction(
      (source: string, flags: string) => new RegExp(source, flags).test(document.body.innerText),
      { timeout, polling: 50 },
      pattern.source,
      pattern.flags
    )
  } catch (error) {
    throw new Error(`the page never said ${String(pattern)} (screenshot: ${await evidence(page)}); it says: ${(await textOf(page)).slice(0, 800)}`, {
      cause: error
    })
  }
}

/**
 * The form control labelled `label` (its `<label>` names it, as assistive technology
 * finds it): found by the label's exact text, through the label's `control`.
 */
async function field(page: Page, label: string): Promise<ElementHandle<HTMLInputElement>> {
  const handle = await page
    .waitForFunction(
      (text: string) => {
        for (const l of Array.from(document.querySelectorAll('label'))) {
          if (l.textContent?.trim() === text && l.control) return l.control
        }
        return null
      },
      { timeout: 60_000, polling: 50 },
      label
    )
    .catch(async (error: unknown) => {
      throw new Error(`no field labelled "${label}" on ${page.url()}: ${(await textOf(page)).slice(0, 400)}`, { cause: error })
    })
  return handle as ElementHandle<HTMLInputElement>
}

/** Types `value` into the field labelled `label` (after clearing it). */
export async function fill(page: Page, label: string, value: string): Promise<void> {
  const input = await field(page, label)
  await input.click({ count: 3 })
  await input.evaluate(el => {
    el.select?.()
  })
  await page.keyboard.press('Backspace')
  await input.type(value)
}

/** Clicks the button or link whose accessible name is `name` (ARIA query: what a screen reader announces). */
export async function press(page: Page, name: string, role: 'button' | 'link' | 'radio' | 'switch' | 'option' = 'button'): Promise<void> {
  const selector = `::-p-aria([name="${name}"][role="${role}"])`
  try {
    await page.locator(selector).setTimeout(60_000).click()
  } catch (error) {
    throw new Error(`no ${role} named "${name}" on ${page.url()} (screenshot: ${await evidence(page)}): ${(await textOf(page)).slice(0, 600)}`, {
      cause: error
    })
  }
}

/** axe-core's source, evaluated in a page through the DevTools protocol (not a script element: the CSP would refuse one). */
const require = createRequire(import.meta.url)
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page as it is (WCAG 2.0–2.2 A and AA rules). */
export async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  await page.evaluate(AXE_SOURCE)
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (ctx: Document, o: unknown) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }>
        }
      }
    ).axe
    const r = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations']
    })
    return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(' ')).slice(0, 5) }))
  })
  return result.filter(v => v.impact === 'serious' || v.impact === 'critical')
}

/**
 * Clicks the checkbox, radio or switch labelled `name` as a person does: on its label (React
 * Aria keeps the input itself visually hidden), with the mouse at the label's centre.
 */
export async function toggle(page: Page, name: string, within = 'body'): Promise<void> {
  const label = await page.waitForFunction(
    (text: string, scope: string) =>
      Array.from(document.querySelector(scope)?.querySelectorAll('label.react-aria-Checkbox, label.react-aria-Radio, label.react-aria-Switch') ?? []).find(
        l => l.textContent?.trim() === text
      ) ?? null,
    { timeout: 60_000, polling: 50 },
    name,
    within
  )
  await (label as ElementHandle<HTMLLabelElement>).click()
}

/**
 * Saves `page`'s downloads in `dir` and returns a function that resolves with the path of
 * the next download Chromium reports complete (CDP Browser.downloadProgress, state
 * `completed`): a file that merely exists may still be being written.
 */
export async function downloadsTo(page: Page, dir: string): Promise<() => Promise<string>> {
  const cdp = await page.createCDPSession()
  const names = new Map<string, string>()
  const done: string[] = []
  let canceled: string | null = null
  cdp.on('Browser.downloadWillBegin', e => {
    names.set(e.guid, e.suggestedFilename)
  })
  cdp.on('Browser.downloadProgress', e => {
    if (e.state === 'completed') done.push(join(dir, names.get(e.guid) ?? e.guid))
    if (e.state === 'canceled') canceled = names.get(e.guid) ?? e.guid
  })
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, browserContextId: page.browserContext().id, eventsEnabled: true })
  let taken = 0
  return async () => {
    await waitUntil(() => done.length > taken || canceled !== null, 60_000)
    if (done.length <= taken) throw new Error(`the download of ${canceled} was canceled`)
    return done[taken++]
  }
}
