import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'
import { z } from 'zod'
import { problems } from '../schemas.ts'

/** Where the console's build is (`web/dist`, made by `npm install`'s `prepare` and by `npm run build`). */
export const CONSOLE_DIST = new URL('../../../web/dist/', import.meta.url).pathname

/**
 * The console's Content Security Policy: scripts,
 * styles, images and calls from this origin only; no inline script or style; framed
 * nowhere; forms post here only. React sets styles through the CSSOM, which `style-src`
 * does not govern; the QR code of two-factor is SVG markup, not an image from elsewhere.
 */
const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/**
 * The paths the console answers with its page (a single-page application: the routes are
 * the browser's); every other path stays the API's (a JSON 404 where nothing is). The
 * mailed links (`/reset-password`, `/verify-email-change`) and Stripe's return addresses
 * (`/billing/success`, `/billing/cancel`) are among them.
 */
const CONSOLE_PATHS = [
  '/',
  '/signin',
  '/signup',
  '/forgot',
  '/reset-password',
  '/verify-email-change',
  '/overview',
  '/verify',
  '/lists',
  '/lists/:uuid',
  '/jobs',
  '/jobs/:uuid',
  '/keys',
  '/webhooks',
  '/webhooks/:uuid',
  '/billing',
  '/billing/:outcome',
  '/notifications',
  '/account'
] as const

/**
 * Serves the customer console from `dist`: its page
 * at every console path, its hashed assets under `/assets/` (cached for a year: a new build
 * has new names), `/theme.css` (shared with the OAuth consent page) and `/favicon.svg`.
 * Brotli or gzip copies made at build are sent to a browser that takes them
 * (`@fastify/static`'s `preCompressed`). Public (no credential) and counted as public reads
 * per client address. Without a build (a checkout where `npm install` has not run) the
 * console paths answer 503 with a sentence saying how to build it; the API is unaffected.
 * Cost: one `stat` and one file stream per request.
 */
export async function consoleRoutes(fastify: FastifyInstance, dist: string = CONSOLE_DIST): Promise<void> {
  const built = existsSync(join(dist, 'index.html'))
  await fastify.register(async app => {
    if (built)
      await app.register(fastifyStatic, {
        root: dist,
        serve: false,
        preCompressed: true,
        index: false,
        dotfiles: 'deny',
        cacheControl: false,
        etag: false,
        lastModified: false,
        acceptRanges: false
      })
    // Every answer of the console carries its policy (helmet's API-wide one forbids everything).
    app.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', CONSOLE_CSP)
    })
    const page = async (_request: unknown, reply: FastifyReply): Promise<FastifyReply> => {
      if (!built)
        return await reply
          .code(503)
          .header('cache-control', 'no-store')
          .type('text/plain; charset=utf-8')
          .send("The console is not built here: run `npm install` (or `npm run build`) in the service's directory, then restart.\n")
      return await reply.header('cache-control', 'no-cache').sendFile('index.html')
    }
    // Declared like every route (not in the API's document: these are pages, not operations).
    const text = (type: string, description: string): { description: string; content: Record<string, { schema: z.ZodType }> } => ({
      description,
      content: { [type]: { schema: z.string() } }
    })
    const pageSchema = {
      hide: true,
      response: { 200: text('text/html', "the console's page"), 503: text('text/plain', 'the console is not built here'), ...problems() }
    }
    for (const url of CONSOLE_PATHS) app.get(url, { config: { auth: 'none' }, schema: pageSchema }, page)
    const assetSchema = {
      hide: true,
      response: {
        200: {
          description: 'a script or style sheet of the build',
          content: { 'application/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } }
        },
        ...problems(404)
      }
    }
    app.get('/assets/:file', { config: { auth: 'none' }, schema: assetSchema }, async (request, reply) => {
      const file = (request.params as { file: string }).file
      // A plain file name of the build (no separator, no dot file, not a compressed copy): no path reaches beyond it.
      if (!built || !/^[\w-]+(\.[\w-]+)*\.(js|css)$/.test(file)) return await reply.callNotFound()
      return await reply.header('cache-control', 'public, max-age=31536000, immutable').sendFile(`assets/${file}`)
    })
    for (const file of ['theme.css', 'favicon.svg']) {
      app.get(
        `/${file}`,
        {
          config: { auth: 'none' },
          schema: { hide: true, response: { 200: text(file.endsWith('.css') ? 'text/css' : 'image/svg+xml', file), ...problems(404) } }
        },
        async (_request, reply) => {
          if (!built) return await reply.callNotFound()
          return await reply.header('cache-control', 'public, max-age=3600').sendFile(file)
        }
      )
    }
  })
}
