import type { MergeCounts, Verdict } from '../../lists/merge.ts'

export interface VerifyFileOptions {
  input: string
  /** The output file (its format by its extension; the input's when it has the same). */
  out?: string
  /** A directory for one file per verdict (`valid.csv`…) and `unverified.csv`. */
  split?: string
  /** Only rows of these verdicts in `out`. */
  only?: Verdict[]
  /** Replace an existing output (and an interrupted run's state). */
  force?: boolean
  api_url: string
  api_key: string
  /** Addresses per request (at most the plan's `max_chunk_size`, the default). */
  chunk_size?: number
  /** The column of addresses: a header name or a 1-based number (detected otherwise). */
  column?: string
  checks?: string[]
  /** The batches' name (the input's file name by default). */
  name?: string
  /** Only say what the list would cost (nothing is sent). */
  estimate?: boolean
  /** Verify what the balance covers, write those results, say what the rest needs. */
  partial?: boolean
  /** Go on with the interrupted run whose state is beside the output. */
  resume?: boolean
  /** Progress: phase, done, total (null while unknown). */
  onProgress?: (phase: 'read' | 'verify' | 'write', done: number, total: number | null) => void
  /** Stops sending and waiting (Ctrl-C): what is known is written, the state kept. */
  signal?: AbortSignal
  /** Seconds each wait for a batch may last (the interface's `wait`, at most 30; 1 by default, for a progress bar that moves). */
  wait_s?: number
  /** CSV output: neutralise text cells a spreadsheet would run as formulas (default true; `--no-formula-escape` turns it off). */
  formula_escape?: boolean
}

export interface VerifyFileResult extends MergeCounts {
  rows: number
  unique: number
  valid: number
  batches: string[]
  cost_per_address: number
  balance: number | null
  /** Tokens the addresses not verified yet need (0 when complete). */
  tokens_needed: number
  complete: boolean
  out: string | null
  split: Record<string, string> | null
  state: string | null
  /** Why the run stopped before the end, when it did. */
  stopped: string | null
  /** Wall time of each phase in this run (ms): reading the file, the estimate, verifying (sending and waiting), writing the output. */
  timings_ms: { read: number; estimate: number; verify: number; write: number }
}

export interface EstimateResult {
  rows: number
  unique: number
  valid: number
  cost_per_address: number
  cost: number
  balance: number
  covered: number
  checks: string[]
}
