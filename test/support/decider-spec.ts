import type { Test } from 'tap'

interface DeciderLike<S, E, C> { initialState: () => S, evolve: (s: S, e: E) => S, decide: (c: C, s: S) => E[] }

/** given([...past events]).when(command).then([...new events]) / .thenThrows(code) — Emmett-style decider specs. */
export function spec<S, E, C> (t: Test, decider: DeciderLike<S, E, C>) {
  return (given: E[]) => ({
    when: (command: C) => ({
      then: (expected: E[], message = 'decides the expected events') => {
        const state = given.reduce(decider.evolve, decider.initialState())
        t.same(decider.decide(command, state), expected, message)
      },
      thenThrows: (code: string, message = `throws ${code}`) => {
        const state = given.reduce(decider.evolve, decider.initialState())
        t.throws(() => decider.decide(command, state), { code }, message)
      }
    })
  })
}
