import { GridFSBucket, MongoClient, type Db } from 'mongodb'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { checkBlobName, type BlobStore } from '../../ports/blob-store.ts'

/**
 * Blobs in GridFS on MongoDB (the distributed topology's store: every API process sees the
 * same files), bucket `blobs`, named `<owner>/<id>` with the owner in the metadata. A new
 * version is uploaded first and the old one deleted after, so a reader meets a whole file.
 * Not run live here (no MongoDB server on this machine): held by the same contract suite as
 * the files adapter when `MONGODB_URL` is set.
 */
export class GridFsBlobStore implements BlobStore {
  private readonly client: MongoClient | null
  private readonly bucket: GridFSBucket
  private constructor(client: MongoClient | null, db: Db) {
    this.client = client
    this.bucket = new GridFSBucket(db, { bucketName: 'blobs' })
  }

  /** Connects to `url` (its database holds the bucket). */
  static async connect(url: string): Promise<GridFsBlobStore> {
    const client = await new MongoClient(url).connect()
    return new GridFsBlobStore(client, client.db())
  }

  async put(owner: string, id: string, content: Readable): Promise<{ bytes: number }> {
    checkBlobName(owner, id)
    const name = `${owner}/${id}`
    const older = await this.bucket.find({ filename: name }).toArray()
    let bytes = 0
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length
        done(null, chunk)
      }
    })
    const upload = this.bucket.openUploadStream(name, { metadata: { owner, id } })
    try {
      await pipeline(content, count, upload)
    } catch (err) {
      await this.bucket.delete(upload.id).catch(() => undefined)
      throw err
    }
    for (const f of older) await this.bucket.delete(f._id).catch(() => undefined)
    return { bytes }
  }

  async open(owner: string, id: string): Promise<Readable | null> {
    checkBlobName(owner, id)
    const [file] = await this.bucket
      .find({ filename: `${owner}/${id}` })
      .sort({ uploadDate: -1 })
      .limit(1)
      .toArray()
    return file ? this.bucket.openDownloadStream(file._id) : null
  }

  async delete(owner: string, id: string): Promise<void> {
    checkBlobName(owner, id)
    for (const f of await this.bucket.find({ filename: `${owner}/${id}` }).toArray()) await this.bucket.delete(f._id)
  }

  async deleteOwner(owner: string): Promise<number> {
    checkBlobName(owner, 'x')
    const files = await this.bucket.find({ 'metadata.owner': owner }).toArray()
    for (const f of files) await this.bucket.delete(f._id)
    return files.length
  }

  async close(): Promise<void> {
    await this.client?.close()
  }
}
