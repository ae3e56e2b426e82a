import type { FastifyReply } from 'fastify'

/** RFC 9457 problem details with the machine `code` (docs/design/architecture.md "HTTP conventions"). */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: string
  errors?: Array<{ path: string; message: string }>
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable'
}

/** An error that the error handler turns into a problem+json answer as is. */
export class HttpProblem extends Error {
  readonly status: number
  readonly code: string
  readonly errors?: Problem['errors']
  /** For a 429 or 503: seconds before a retry may succeed (sent as `Retry-After`). */
  readonly retry_after_s?: number
  constructor(status: number, code: string, detail: string, errors?: Problem['errors'], retryAfterS?: number) {
    super(detail)
    this.status = status
    this.code = code
    this.errors = errors
    this.retry_after_s = retryAfterS
  }
}

/** Seconds a 429 asks a client to wait when the refusal does not know better (RFC 9110 §10.2.3). */
export const DEFAULT_RETRY_AFTER_S = 60

export function problem(status: number, code: string, detail: string, errors?: Problem['errors']): Problem {
  return { type: `/problems/${code}`, title: TITLES[status] ?? 'Error', status, detail, code, ...(errors ? { errors } : {}) }
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(p)
}
