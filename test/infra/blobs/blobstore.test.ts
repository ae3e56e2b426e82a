// Customers' files at rest: the blob store
// contract on the embedded adapter (files in DATA_DIR/blobs), on PostgreSQL (the local
// server) and, when MONGODB_URL is set,
// on GridFS (not run here: no MongoDB server on this machine); the sealed stream a file is
// kept in: what is sealed opens back byte for byte, its bytes on disk are not the file's,
// and an altered, cut, reordered or extended stream, another owner's key or a destroyed
// key does not open. The oracles: SHA-256 of the test's own bytes, libsodium's refusals.
import t from 'tap'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { randomBytes, createHash } from 'node:crypto'
import { join } from 'node:path'
import { readdirSync, readFileSync } from 'node:fs'
import { FileBlobStore } from '../../../src/infra/blobs/files.ts'
import { PostgresBlobStore } from '../../../src/infra/blobs/postgres.ts'
import { requirePostgres, testDatabase } from '../../support/postgres.ts'
import { LibsodiumSealer } from '../../../src/infra/crypto/sealer.ts'
import { SqliteDataKeyStore } from '../../../src/infra/crypto/keystore.ts'
import { blobStoreContract, bytesOf } from '../../support/blobstore-contract.ts'

const dir = t.testdir()
blobStoreContract(t, 'files', async () => new FileBlobStore(join(dir, 'blobs')))
t.test('PostgreSQL (a database of its own on the local server)', async t => {
  if (!(await requirePostgres(t))) return
  const url = await testDatabase(t, 'blobs')
  blobStoreContract(t, 'PostgreSQL', async () => new PostgresBlobStore(url, { schema: 'blobs' }))
})
if (process.env.MONGODB_URL) {
  const { GridFsBlobStore } = await import('../../../src/infra/blobs/gridfs.ts')
  blobStoreContract(t, 'GridFS', async () => await GridFsBlobStore.connect(process.env.MONGODB_URL!))
}

t.test("a sealed stream: opens back whole; refuses what was altered, cut, extended, another owner's or erased", async t => {
  const keys = new SqliteDataKeyStore(join(dir, 'keys.db'), randomBytes(32))
  t.teardown(() => keys.close())
  const sealer = new LibsodiumSealer(keys)
  const plain = Buffer.concat([Buffer.from('email,name\njane@example.com,Jane\n'), randomBytes(200_000)])
  const seal = async (owner: string, data: Buffer): Promise<Buffer> => {
    const out: Buffer[] = []
    await pipeline(
      Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
      await sealer.sealStream(owner),
      new Transform({
        transform(c, _e, done) {
          out.push(c as Buffer)
          done()
        }
      })
    )
    return Buffer.concat(out)
  }
  const open = async (owner: string, sealed: Buffer): Promise<Buffer> => {
    const unseal = await sealer.unsealStream(owner)
    if (unseal === null) throw new Error('key destroyed')
    return await bytesOf(Readable.from([sealed.subarray(0, 7), sealed.subarray(7, 70_000), sealed.subarray(70_000)]).pipe(unseal))
  }
  const owner = '01a20000-0000-7000-8000-000000000001'
  const sealed = await seal(owner, plain)
  t.notOk(sealed.includes(Buffer.from('jane@example.com')), 'the address is not in the sealed bytes')
  t.equal(
    createHash('sha256')
      .update(await open(owner, sealed))
      .digest('hex'),
    createHash('sha256').update(plain).digest('hex'),
    'opened byte for byte'
  )
  t.same(await open(owner, await seal(owner, Buffer.alloc(0))), Buffer.alloc(0), 'an empty file too')
  const altered = Buffer.from(sealed)
  altered[5000] ^= 1
  await t.rejects(open(owner, altered), /altered/, 'one bit flipped')
  await t.rejects(open(owner, sealed.subarray(0, sealed.length - 100)), /cut short|altered/, 'cut short')
  const lastSegment = sealed.subarray(sealed.length - 50)
  await t.rejects(open(owner, Buffer.concat([sealed, lastSegment])), /after the final segment|altered|cut short/, 'carried on past its end')
  const stranger = '01a20000-0000-7000-8000-000000000002'
  await seal(stranger, Buffer.from('theirs'))
  await t.rejects(open(stranger, sealed), /altered/, "another owner's key does not open it")
  await sealer.destroyKey(owner)
  t.equal(await sealer.unsealStream(owner), null, 'after erasure there is no key to open it with')
})

t.test('at rest in DATA_DIR, a file is sealed bytes', async t => {
  const keys = new SqliteDataKeyStore(join(dir, 'keys2.db'), randomBytes(32))
  t.teardown(() => keys.close())
  const sealer = new LibsodiumSealer(keys)
  const store = new FileBlobStore(join(dir, 'sealed-blobs'))
  const owner = '01a20000-0000-7000-8000-000000000003'
  await store.put(owner, 'list', Readable.from([Buffer.from('email\nsecret.person@example.com\n')]).pipe(await sealer.sealStream(owner)))
  // By its name: the folder may hold a `.list.<random>.partial` of a put under way, which sorts first.
  t.same(
    readdirSync(join(dir, 'sealed-blobs', owner)).filter(f => !f.endsWith('.partial')),
    ['list'],
    'one file, named as the blob'
  )
  const onDisk = readFileSync(join(dir, 'sealed-blobs', owner, 'list'))
  t.notOk(onDisk.includes(Buffer.from('secret.person')), 'no address in the file on disk')
  t.equal((await bytesOf((await store.open(owner, 'list'))!.pipe((await sealer.unsealStream(owner))!))).toString(), 'email\nsecret.person@example.com\n')
})
