// The yardstick of bench/submissions.ts: a bare fastify route answering POST /api/verify
// with 202 and a small JSON body, nothing else (no schema, no store, no log), in a process
// of its own started with the same Node.js flags as the service. Prints its URL on stdout.
import Fastify from 'fastify'
import { randomUUID } from 'node:crypto'

const app = Fastify({ logger: false })
app.post('/api/verify', async (_request, reply) => reply.code(202).send({ uuid: randomUUID(), status: 'queued' }))
const url = await app.listen({ host: '127.0.0.1', port: 0, backlog: 4096 })
process.stdout.write(`${url}\n`)
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
