import { createReadStream, createWriteStream, existsSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { randomBytes } from 'node:crypto'
import { checkBlobName, type BlobStore } from '../../ports/blob-store.ts'
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-files.ts'

/**
 * Blobs as files in `<dir>/<owner>/<id>` (the embedded default: `DATA_DIR/blobs`). A blob is
 * written to a temporary name beside it and renamed into place: a reader sees the old or
 * the new one whole, never half. An owner's blobs are one directory, removed at once.
 * Directories are made 0700 and files 0600 (customers' files: the service's user alone).
 * A blob is synced to disk, then its name (the directory), before `put` resolves: it
 * survives a power cut as the event naming it does.
 */
export class FileBlobStore implements BlobStore {
  private readonly dir: string
  constructor(dir: string) {
    this.dir = dir
  }

  async put(owner: string, id: string, content: Readable): Promise<{ bytes: number }> {
    checkBlobName(owner, id)
    const folder = join(this.dir, owner)
    makePrivateDir(folder)
    const temporary = join(folder, `.${id}.${randomBytes(6).toString('hex')}.partial`)
    let bytes = 0
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length
        done(null, chunk)
      }
    })
    try {
      await pipeline(content, count, createWriteStream(temporary, { flags: 'wx', mode: PRIVATE_FILE_MODE }))
      // On disk before its name is: the event that names the blob is synced (events.db), so is the blob (in the thread pool).
      await syncFile(temporary, 'r+')
      renameSync(temporary, join(folder, id))
      await syncFile(folder, 'r')
    } catch (err) {
      rmSync(temporary, { force: true })
      throw err
    }
    return { bytes }
  }

  async open(owner: string, id: string): Promise<Readable | null> {
    checkBlobName(owner, id)
    const file = join(this.dir, owner, id)
    if (!existsSync(file)) return null
    return createReadStream(file)
  }

  async delete(owner: string, id: string): Promise<void> {
    checkBlobName(owner, id)
    rmSync(join(this.dir, owner, id), { force: true })
  }

  async deleteOwner(owner: string): Promise<number> {
    checkBlobName(owner, 'x')
    const folder = join(this.dir, owner)
    if (!existsSync(folder)) return 0
    const n = readdirSync(folder).filter(f => !f.startsWith('.')).length
    rmSync(folder, { recursive: true, force: true })
    return n
  }

  async close(): Promise<void> {}
}

/** fsync(2) of a file or a directory (`flags` 'r' for a directory), off the event loop. */
async function syncFile(path: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
