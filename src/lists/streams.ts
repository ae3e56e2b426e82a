// Byte-level helpers for a customer's list file on its way in and out: a meter that bounds an
// upload and keeps its head (the layout is read from it), the head of a stored file, and a
// merge's output as a stream that exists only once the merge found the file sound.
import { PassThrough, type Readable, Transform, type TransformCallback } from 'node:stream'

/** Bytes of a file's start the layout is read from (`layoutFromHead`). */
export const HEAD_BYTES = 65_536

/**
 * Counts what passes, and fails with `over()` once more than `limit` bytes passed; keeps the
 * first HEAD_BYTES in `head`. Memory: HEAD_BYTES plus one chunk.
 */
export class Metered extends Transform {
  bytes = 0
  head: Buffer = Buffer.alloc(0)
  private readonly limit: number
  private readonly over: () => Error
  constructor(limit: number, over: () => Error) {
    super()
    this.limit = limit
    this.over = over
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length
    if (this.head.length < HEAD_BYTES) this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_BYTES - this.head.length)])
    if (this.bytes > this.limit) {
      done(this.over())
      return
    }
    done(null, chunk)
  }
}

/**
 * The first HEAD_BYTES of the stream `open()` gives, and whether that is the whole file; the
 * stream is destroyed after (nothing past the head is read).
 */
export async function readHead(open: () => Promise<Readable>): Promise<{ head: Buffer; whole: boolean }> {
  const chunks: Buffer[] = []
  let n = 0
  const s = await open()
  for await (const c of s) {
    chunks.push(c as Buffer)
    n += (c as Buffer).length
    if (n >= HEAD_BYTES) break
  }
  s.destroy()
  return { head: Buffer.concat(chunks).subarray(0, HEAD_BYTES), whole: n < HEAD_BYTES }
}

/**
 * A merge's output: `start(into)` begins writing into a new stream and says when the file was
 * read through and found sound (`ready`) and when the output is whole (`done`). Resolves with
 * the stream once `ready` holds, so that a refusal is still thrown before the first byte is
 * sent; a failure after that destroys the stream with its error.
 * @throws what `ready` rejects with.
 */
export async function mergedOutput(start: (into: PassThrough) => { ready: Promise<void>; done: Promise<unknown> }): Promise<PassThrough> {
  const out = new PassThrough()
  const merge = start(out)
  await merge.ready
  merge.done.then(
    () => out.end(),
    err => out.destroy(err as Error)
  )
  return out
}
