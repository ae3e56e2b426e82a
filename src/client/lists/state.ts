import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { rmSync } from 'node:fs'
import type { StoredResult } from '../../lists/merge.ts'

/**
 * Where a `svc verify-file` run stands, in a SQLite file beside its output (node:sqlite):
 * the list's unique addresses in order of first appearance (`seq`, the de-duplication key
 * unique), which of them went to which batch (parts: a batch holds `count` addresses from
 * `first`, in order, one item each), and the results collected. A run killed at any point
 * starts again from it (`--resume`); it is removed when the run succeeds. On disk, not in
 * memory: a million-row list costs the process a page cache, not the list.
 */
export interface Part {
  n: number
  batch_uuid: string
  first: number
  count: number
  final: boolean
}

export class RunState {
  readonly path: string
  private readonly db: DatabaseSync
  private readonly insertUnit: StatementSync
  private readonly seqOfKey: StatementSync
  private readonly insertResult: StatementSync
  private readonly resultOf: StatementSync

  constructor(path: string) {
    this.path = path
    this.db = new DatabaseSync(path)
    this.db.exec(`
      PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16000;
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS units (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, email TEXT NOT NULL, valid INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS units_valid ON units (valid, seq);
      CREATE TABLE IF NOT EXISTS parts (n INTEGER PRIMARY KEY, batch_uuid TEXT NOT NULL, first INTEGER NOT NULL, count INTEGER NOT NULL, final INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS results (seq INTEGER PRIMARY KEY, verdict TEXT NOT NULL, reason TEXT NOT NULL, score INTEGER, flags TEXT NOT NULL, did_you_mean TEXT, mx_host TEXT, smtp_provider TEXT, checked_at TEXT);
    `)
    this.insertUnit = this.db.prepare('INSERT OR IGNORE INTO units (seq, key, email, valid) VALUES (?, ?, ?, ?)')
    this.seqOfKey = this.db.prepare('SELECT seq FROM units WHERE key = ?')
    this.insertResult = this.db.prepare(
      'INSERT OR REPLACE INTO results (seq, verdict, reason, score, flags, did_you_mean, mx_host, smtp_provider, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'
    )
    this.resultOf = this.db.prepare('SELECT verdict, reason, score, flags, did_you_mean, mx_host, smtp_provider, checked_at FROM results WHERE seq = ?')
  }

  get(k: string): string | null {
    const row = this.db.prepare('SELECT v FROM meta WHERE k = ?').get(k) as { v: string } | undefined
    return row?.v ?? null
  }

  set(k: string, v: string): void {
    this.db.prepare('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)').run(k, v)
  }

  /** Runs `fn` in one transaction (a batch of inserts: one commit). */
  transaction<T>(fn: () => T): T {
    this.db.exec('BEGIN')
    try {
      const out = fn()
      this.db.exec('COMMIT')
      return out
    } catch (err) {
      this.db.exec('ROLLBACK')
      throw err
    }
  }

  /** Records an address under `seq` if its key is new. @returns its seq (the existing one for a duplicate). */
  unit(seq: number, key: string, email: string, valid: boolean): { seq: number; added: boolean } {
    const r = this.insertUnit.run(seq, key, email, valid ? 1 : 0)
    if (Number(r.changes) === 1) return { seq, added: true }
    return { seq: Number((this.seqOfKey.get(key) as { seq: number }).seq), added: false }
  }

  seqOf(key: string): number | null {
    const row = this.seqOfKey.get(key) as { seq: number } | undefined
    return row === undefined ? null : Number(row.seq)
  }

  units(): number {
    return Number((this.db.prepare('SELECT count(*) AS n FROM units').get() as { n: number }).n)
  }

  /** Addresses from `seq` on, at most `limit`, in order. */
  addressesFrom(seq: number, limit: number): Array<{ seq: number; email: string; valid: boolean }> {
    return (
      this.db.prepare('SELECT seq, email, valid FROM units WHERE seq >= ? ORDER BY seq LIMIT ?').all(seq, limit) as Array<{
        seq: number
        email: string
        valid: number
      }>
    ).map(r => ({ seq: Number(r.seq), email: r.email, valid: r.valid === 1 }))
  }

  /** Valid addresses from `seq` on (what a partial run may still send). */
  validFrom(seq: number): number {
    return Number((this.db.prepare('SELECT count(*) AS n FROM units WHERE seq >= ? AND valid = 1').get(seq) as { n: number }).n)
  }

  /** The seq after the last of the first `n` valid addresses from `seq` (a partial run's end), or the end of the list. */
  seqAfterValid(seq: number, n: number): number {
    if (n <= 0) return seq
    const row = this.db.prepare('SELECT seq FROM units WHERE seq >= ? AND valid = 1 ORDER BY seq LIMIT 1 OFFSET ?').get(seq, n - 1) as
      | { seq: number }
      | undefined
    return row === undefined ? this.units() : Number(row.seq) + 1
  }

  /** Valid addresses without a result yet (what the rest of a list costs). */
  validUnverified(): number {
    return Number(
      (
        this.db.prepare('SELECT count(*) AS n FROM units u WHERE u.valid = 1 AND NOT EXISTS (SELECT 1 FROM results r WHERE r.seq = u.seq)').get() as {
          n: number
        }
      ).n
    )
  }

  parts(): Part[] {
    return (
      this.db.prepare('SELECT n, batch_uuid, first, count, final FROM parts ORDER BY n').all() as Array<{
        n: number
        batch_uuid: string
        first: number
        count: number
        final: number
      }>
    ).map(p => ({ n: Number(p.n), batch_uuid: p.batch_uuid, first: Number(p.first), count: Number(p.count), final: p.final === 1 }))
  }

  savePart(p: Part): void {
    this.db
      .prepare('INSERT OR REPLACE INTO parts (n, batch_uuid, first, count, final) VALUES (?, ?, ?, ?, ?)')
      .run(p.n, p.batch_uuid, p.first, p.count, p.final ? 1 : 0)
  }

  /** The first seq no part holds (where sending goes on). */
  sentUpTo(): number {
    const row = this.db.prepare('SELECT max(first + count) AS end FROM parts').get() as { end: number | null }
    return row.end === null ? 0 : Number(row.end)
  }

  saveResult(seq: number, r: StoredResult): void {
    this.insertResult.run(seq, r.verdict, r.reason, r.score, r.flags, r.did_you_mean, r.mx_host, r.smtp_provider, r.checked_at)
  }

  result(seq: number): StoredResult | null {
    const r = this.resultOf.get(seq) as StoredResult | undefined
    return r === undefined ? null : { ...r, score: r.score === null ? null : Number(r.score) }
  }

  results(): number {
    return Number((this.db.prepare('SELECT count(*) AS n FROM results').get() as { n: number }).n)
  }

  /** Results of a part (its seqs first to first + count − 1). */
  resultsIn(first: number, count: number): number {
    return Number((this.db.prepare('SELECT count(*) AS n FROM results WHERE seq >= ? AND seq < ?').get(first, first + count) as { n: number }).n)
  }

  close(): void {
    this.db.close()
  }

  /** Closes and deletes the state (with SQLite's write-ahead log and shared memory files). */
  remove(): void {
    this.db.close()
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.path}${suffix}`, { force: true })
  }
}
