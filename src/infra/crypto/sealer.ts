import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto'
import { Transform, type TransformCallback } from 'node:stream'
import sodium, { type StateAddress } from 'libsodium-wrappers'
import { keyObjectOf } from '../../lib/crypto/hashing.ts'
import { randomBytesPooled } from '../../lib/random.ts'
import type { DataKeyStore } from '../../ports/data-keys.ts'
import type { Sealer } from '../../ports/sealer.ts'

const PREFIX = 'sealed:v1:'

/** The start of a sealed stream (a customer's file at rest): magic, then libsodium's secretstream header. */
const STREAM_MAGIC = Buffer.from('SVCBLOB1')
/** Plaintext bytes per sealed segment of a stream. */
const SEGMENT = 64 * 1024

/**
 * Seals personal data (e-mail addresses, codes) for events with the owning account's
 * data key: AES-256-GCM, owner uuid as additional data. Sealed text looks like
 * `sealed:v1:<base64url(iv | ciphertext | tag)>`.
 */
export class LibsodiumSealer implements Sealer {
  private readonly keys: DataKeyStore
  constructor(keys: DataKeyStore) {
    this.keys = keys
  }

  /** @throws DataKeyDestroyedError when the owner's key was destroyed. */
  async seal(owner: string, plaintext: string): Promise<string> {
    const key = await this.keys.getOrCreate(owner)
    // A random 96-bit IV from the CSPRNG (NIST SP 800-38D §8.2.2), drawn from the process's pool.
    const iv = randomBytesPooled(12)
    const c = createCipheriv('aes-256-gcm', keyObjectOf(key), iv)
    c.setAAD(Buffer.from(owner))
    const body = Buffer.concat([iv, c.update(plaintext, 'utf8'), c.final(), c.getAuthTag()])
    return PREFIX + body.toString('base64url')
  }

  /** The key of the owner's sealed streams: HKDF-SHA-256 of the data key (RFC 5869), bound to the owner. */
  private streamKey(key: Buffer, owner: string): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', key, Buffer.from('svc sealed stream v1'), Buffer.from(owner), 32))
  }

  /**
   * A stream that seals what goes through it with the owner's data key (a customer's file
   * at rest): libsodium's secretstream (XChaCha20-Poly1305, each 64 KiB segment
   * authenticated and ordered, the last one marked final, so that a cut, reordered or
   * altered file is refused), after `SVCBLOB1` and the stream's header; each segment is
   * length-prefixed. Memory: one segment.
   * @throws DataKeyDestroyedError when the owner's key was destroyed.
   */
  async sealStream(owner: string): Promise<Transform> {
    await sodium.ready
    const key = this.streamKey(await this.keys.getOrCreate(owner), owner)
    const { state, header } = sodium.crypto_secretstream_xchacha20poly1305_init_push(key)
    let pending: Buffer = Buffer.alloc(0)
    const segment = (plain: Buffer, final: boolean): Buffer => {
      const sealed = sodium.crypto_secretstream_xchacha20poly1305_push(
        state,
        plain,
        null,
        final ? sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL : sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE
      )
      const length = Buffer.alloc(4)
      length.writeUInt32BE(sealed.length)
      return Buffer.concat([length, sealed])
    }
    let started = false
    return new Transform({
      transform(chunk: Buffer, _enc, done: TransformCallback) {
        if (!started) {
          this.push(Buffer.concat([STREAM_MAGIC, Buffer.from(header)]))
          started = true
        }
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        while (pending.length > SEGMENT) {
          this.push(segment(pending.subarray(0, SEGMENT), false))
          pending = pending.subarray(SEGMENT)
        }
        done()
      },
      flush(done: TransformCallback) {
        if (!started) this.push(Buffer.concat([STREAM_MAGIC, Buffer.from(header)]))
        this.push(segment(pending, true))
        done()
      }
    })
  }

  /**
   * The stream that opens what `sealStream` sealed, or null when the owner's key was
   * destroyed (crypto-shredded). It fails on anything altered, reordered, cut short or
   * carried on past its final segment.
   */
  async unsealStream(owner: string): Promise<Transform | null> {
    await sodium.ready
    const stored = await this.keys.get(owner)
    if (!stored) return null
    const key = this.streamKey(stored, owner)
    const HEADER = STREAM_MAGIC.length + sodium.crypto_secretstream_xchacha20poly1305_HEADERBYTES
    let state: StateAddress | null = null
    let pending: Buffer = Buffer.alloc(0)
    let ended = false
    return new Transform({
      transform(chunk: Buffer, _enc, done: TransformCallback) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        try {
          if (state === null) {
            if (pending.length < HEADER) {
              done()
              return
            }
            if (!pending.subarray(0, STREAM_MAGIC.length).equals(STREAM_MAGIC)) throw new Error('not a sealed stream')
            state = sodium.crypto_secretstream_xchacha20poly1305_init_pull(pending.subarray(STREAM_MAGIC.length, HEADER), key)
            pending = pending.subarray(HEADER)
          }
          while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
            if (ended) throw new Error('data after the final segment of a sealed stream')
            const length = pending.readUInt32BE(0)
            const opened = sodium.crypto_secretstream_xchacha20poly1305_pull(state, pending.subarray(4, 4 + length), null)
            if (!opened) throw new Error('a sealed stream was altered')
            pending = pending.subarray(4 + length)
            if (opened.tag === sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL) ended = true
            if (opened.message.length > 0) this.push(Buffer.from(opened.message))
          }
          done()
        } catch (err) {
          done(err as Error)
        }
      },
      flush(done: TransformCallback) {
        done(ended && pending.length === 0 ? null : new Error('a sealed stream was cut short'))
      }
    })
  }

  /** Destroys the owner's data key: everything sealed with it becomes unreadable. */
  async destroyKey(owner: string): Promise<void> {
    await this.keys.destroy(owner)
  }

  /** The plaintext, or null when the key was destroyed (crypto-shredded). @throws on tampered text. */
  async unseal(owner: string, sealed: string): Promise<string | null> {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed value')
    const key = await this.keys.get(owner)
    if (!key) return null
    const body = Buffer.from(sealed.slice(PREFIX.length), 'base64url')
    const d = createDecipheriv('aes-256-gcm', keyObjectOf(key), body.subarray(0, 12))
    d.setAAD(Buffer.from(owner))
    d.setAuthTag(body.subarray(body.length - 16))
    return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]).toString('utf8')
  }
}
