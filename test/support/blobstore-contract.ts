import type { Test } from 'tap'
import { Readable } from 'node:stream'
import { randomBytes, createHash } from 'node:crypto'
import type { BlobStore } from '../../src/ports/blob-store.ts'

/** Every byte of a stream. */
export async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer))
  return Buffer.concat(chunks)
}

/**
 * The blob store contract (src/ports/blob-store.ts), run against each adapter: what goes
 * in comes out byte for byte (a large blob streamed in pieces), a new version replaces
 * the old whole, a failed stream leaves nothing (and the old version), delete and
 * deleteOwner remove, owners are apart, and names that could be paths are refused.
 * The oracle: SHA-256 of the bytes the test generated.
 */
export function blobStoreContract(t: Test, name: string, make: () => Promise<BlobStore>): void {
  t.test(`${name}: the blob store contract`, async t => {
    const store = await make()
    t.teardown(() => store.close())
    const owner = `owner${randomBytes(4).toString('hex')}`
    const other = `other${randomBytes(4).toString('hex')}`
    const big = randomBytes(3 * 1024 * 1024 + 17)
    const pieces = (b: Buffer, size = 65_536): Readable =>
      Readable.from(
        (function* () {
          for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size)
        })()
      )
    t.same(await store.put(owner, 'list1', pieces(big)), { bytes: big.length }, 'the bytes stored')
    const back = await store.open(owner, 'list1')
    t.ok(back)
    t.equal(
      createHash('sha256')
        .update(await bytesOf(back!))
        .digest('hex'),
      createHash('sha256').update(big).digest('hex'),
      'a 3 MiB blob back byte for byte'
    )
    t.equal(await store.open(other, 'list1'), null, 'another owner does not see it')
    t.equal(await store.open(owner, 'nope'), null, 'an unknown blob is null')

    await store.put(owner, 'list1', Readable.from([Buffer.from('second version')]))
    t.equal((await bytesOf((await store.open(owner, 'list1'))!)).toString(), 'second version', 'a new version replaces the old')

    const failing = new Readable({
      read() {
        this.push(Buffer.from('half of it'))
        this.destroy(new Error('the client went away'))
      }
    })
    await t.rejects(store.put(owner, 'list1', failing), /went away/, 'a failed stream is an error')
    t.equal((await bytesOf((await store.open(owner, 'list1'))!)).toString(), 'second version', 'and leaves the old version whole')
    await t.rejects(
      store.put(
        owner,
        'list2',
        Readable.from([Buffer.from('x')]).pipe(
          new (await import('node:stream')).PassThrough({
            transform(_c, _e, done) {
              done(new Error('refused midway'))
            }
          })
        )
      ),
      /refused midway/
    )
    t.equal(await store.open(owner, 'list2'), null, 'a failed first version leaves nothing')

    await store.put(owner, 'list3', Readable.from([Buffer.from('three')]))
    await store.put(other, 'list3', Readable.from([Buffer.from('theirs')]))
    await store.delete(owner, 'list3')
    t.equal(await store.open(owner, 'list3'), null, 'deleted')
    t.equal((await bytesOf((await store.open(other, 'list3'))!)).toString(), 'theirs', "the other owner's blob of the same id stays")
    t.equal(await store.deleteOwner(owner), 1, 'deleteOwner counts what it removed')
    t.equal(await store.open(owner, 'list1'), null, 'every blob of the owner is gone')
    t.equal(await store.deleteOwner(owner), 0, 'twice is harmless')
    await t.rejects(store.put('../etc', 'passwd', Readable.from([Buffer.from('x')])), /not a blob name/, 'no path as an owner')
    await t.rejects(store.open(owner, '../../keys.db'), /not a blob name/, 'no path as an id')
    await store.deleteOwner(other)
  })
}
