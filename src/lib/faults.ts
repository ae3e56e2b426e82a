/**
 * Fault points for crash tests (as FreeBSD's fail points or TiKV's fail-rs): a flow calls
 * `faultPoint(ctx.config.fault_point, 'submit.after_reserve')` between two of its steps,
 * and when the `FAULT_POINT` setting names that step the process kills itself with SIGKILL
 * right there — no handler, no flush, as a power cut would. Unset (the default), it does
 * nothing. Names read `<flow>.<step>`; the flows list theirs in their docstrings.
 */
export function faultPoint(configured: string | null, name: string): void {
  if (configured !== name) return
  process.kill(process.pid, 'SIGKILL')
  // The signal is on its way: let nothing else run meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000)
}
