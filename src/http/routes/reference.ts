import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { CHECK_COSTS } from '../../domain/checks.ts'
import { CHECK_OUTCOMES, CHECKS, FLAGS, REASONS, VERDICTS, type Term } from '../../verifier/vocabulary.ts'
import { problemType } from '../problem-types.ts'

const esc = (s: string): string => s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
/** `code` spans and **bold** of the vocabulary's sentences, escaped otherwise. */
const inline = (s: string): string =>
  esc(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')

const STYLE = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;line-height:1.5;max-width:60rem;margin:0 auto;padding:1rem 1.25rem;color:#1b1f23;background:#fff}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #d0d7de}table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid #d0d7de}th{background:#f6f8fa}code{font-family:ui-monospace,monospace;background:#f6f8fa;padding:0 .2rem;border-radius:3px}
.send{color:#116329}.do-not-send{color:#a40e26}.send-with-care{color:#7d4e00}.retry-later{color:#0550ae}a{color:#0550ae}dl dt{font-weight:600;margin-top:.75rem}
@media (max-width:40rem){table,thead,tbody,tr,th,td{display:block}thead{display:none}td{border:0;padding:.1rem 0}tr{border-bottom:1px solid #d0d7de;padding:.5rem 0}}`

/** A page of ours for people: no script, one stylesheet of this origin, framed nowhere. */
function html(reply: FastifyReply, status: number, lang: string, title: string, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-security-policy', "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    .header('cache-control', 'public, max-age=300')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><link rel="stylesheet" href="/reference/style.css"></head><body><main>${body}</main></body></html>`
    )
}

const actionClass = (t: Term): string => (t.action ? ` class="${t.action.replaceAll(' ', '-')}"` : '')
function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map(h => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map(r => `<tr>${r.join('')}</tr>`).join('')}</tbody></table>`
}
const termRow = (name: string, t: Term, extra: string[] = []): string[] => [
  `<td><code id="${esc(name)}">${esc(name)}</code></td>`,
  ...extra,
  `<td>${inline(t.meaning)}${t.advice ? ` ${inline(t.advice)}` : ''}</td>`,
  `<td${actionClass(t)}>${t.action ? esc(t.action) : ''}</td>`
]

/** The reference page of the result vocabulary (the same text as the document's enums). */
function resultsPage(): string {
  return `<h1>What a result means</h1>
<p>Every verification answers a <strong>verdict</strong> (what to do), a <strong>reason</strong> (why), a <strong>score</strong> (0–100), <strong>flags</strong> and the <strong>checks</strong> that ran. This page is the vocabulary; the API document (<a href="/docs">/docs</a>) uses the same words.</p>
<h2 id="verdicts">Verdicts</h2>${table(
    ['verdict', 'meaning', 'what to do'],
    Object.entries(VERDICTS).map(([k, t]) => termRow(k, t))
  )}
<h2 id="reasons">Reasons</h2>${table(
    ['reason', 'verdict', 'meaning', 'what to do'],
    Object.entries(REASONS).map(([k, t]) => termRow(k, t, [`<td><a href="#${t.verdict}">${esc(t.verdict)}</a></td>`]))
  )}
<h2 id="flags">Flags</h2>${table(
    ['flag', 'meaning', ''],
    Object.entries(FLAGS).map(([k, t]) => termRow(k, t))
  )}
<h2 id="checks">Checks</h2>${table(
    ['check', 'tokens', 'what it does', ''],
    Object.entries(CHECKS).map(([k, t]) => termRow(k, t, [`<td>${CHECK_COSTS[k as keyof typeof CHECK_COSTS]}</td>`]))
  )}
<h2 id="outcomes">Check outcomes</h2>${table(
    ['outcome', 'meaning', ''],
    Object.entries(CHECK_OUTCOMES).map(([k, t]) => termRow(k, t))
  )}
<h2 id="billing">What is charged</h2><p>A result costs the checks that ran and were asked for; an <code>unknown</code> result that a check could not answer costs nothing (its reservation is released). Test keys (<code>svc_test_…</code>) never cost anything.</p>`
}

/**
 * Pages for people: `GET /reference/results`, the
 * result vocabulary; `GET /problems/{code}`, what a problem `type` means (RFC 9457 §3.1.1:
 * each problem's `type` resolves here); `GET /reference/style.css`. No script, no asset
 * from elsewhere (CSP `default-src 'none'; style-src 'self'`).
 */
export function referenceRoutes(fastify: FastifyInstance): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Reference']
  const Html = z.string().meta({ description: 'an HTML page' })
  app.route({
    method: 'GET',
    url: '/reference/results',
    config: { auth: 'none' },
    schema: {
      operationId: 'referenceResults',
      summary: 'The result vocabulary for people: each verdict, reason, flag, check and outcome, and what to do',
      tags,
      response: { 200: { description: 'The page', content: { 'text/html': { schema: Html } } } }
    },
    handler: async (_request, reply) => html(reply, 200, 'en', 'What a result means — Email verification', resultsPage())
  })
  app.route({
    method: 'GET',
    url: '/problems/:code',
    config: { auth: 'none' },
    schema: {
      operationId: 'problemType',
      summary: "What a problem means (the page a problem's `type` names, RFC 9457 §3.1.1)",
      tags,
      params: z.object({ code: z.string().max(130).meta({ description: "the problem's `code`, `<operation>.<reason>`" }) }),
      response: {
        200: { description: 'The page', content: { 'text/html': { schema: Html } } },
        404: { description: 'No such problem type', content: { 'text/html': { schema: Html } } }
      }
    },
    handler: async (request, reply) => {
      const p = problemType(request.params.code)
      if (!p)
        return html(
          reply,
          404,
          'en',
          'No such problem type',
          `<h1>No such problem type</h1><p>This service answers no problem <code>${esc(request.params.code)}</code>. Problems are listed by their codes in the API document (<a href="/docs">/docs</a>).</p>`
        )
      return html(
        reply,
        200,
        'en',
        `${p.title} — Email verification`,
        `<h1>${esc(p.title)}</h1>
<dl><dt>Code</dt><dd><code>${esc(p.code)}</code></dd>${p.operation ? `<dt>Operation</dt><dd>${esc(p.operation)}</dd>` : ''}<dt>Status</dt><dd>${p.status} (the problem's <code>status</code> says which this answer had)</dd>
<dt>What it means</dt><dd>${inline(p.meaning)}</dd><dt>What to do</dt><dd>${inline(p.action)}</dd></dl>
<p>Problems follow RFC 9457: <code>type</code> (this page), <code>title</code>, <code>status</code>, <code>detail</code> (what happened this time), <code>code</code>, and <code>errors</code> for invalid fields. <a href="/reference/results">What results mean</a> · <a href="/docs">The API</a></p>`
      )
    }
  })
  app.route({
    method: 'GET',
    url: '/reference/style.css',
    config: { auth: 'none' },
    schema: {
      operationId: 'referenceStyle',
      summary: "The reference pages' stylesheet",
      tags,
      response: { 200: { description: 'CSS', content: { 'text/css': { schema: z.string() } } } }
    },
    handler: async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLE)
  })
}
