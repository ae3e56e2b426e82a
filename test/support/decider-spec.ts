import type { Test } from 'tap'
import type { ErrorKind } from '../../src/domain/shared.ts'

interface DeciderLike<S, E, C> {
  initialState: () => S
  evolve: (s: S, e: E) => S
  decide: (c: C, s: S) => E[]
}

/**
 * The HTTP status each kind of domain error answers with (src/domain/shared.ts), so that a
 * spec states a refusal as the interface document's tables do: by status.
 */
const KIND_OF_STATUS: Readonly<Record<number, ErrorKind>> = {
  400: 'invalid',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'unprocessable',
  429: 'locked'
}

/**
 * given([...past events]).when(command).then([...new events]) / .thenThrows(code) — Emmett-style decider specs.
 * Also: .thenNothing(message) (no event), .thenRejects(code, status, message) (a DomainError
 * of that code whose kind answers with that HTTP status), and given([...]).thenState(select, expected, message)
 * (what the fold of the given events holds).
 */
export function spec<S, E, C>(t: Test, decider: DeciderLike<S, E, C>) {
  const fold = (given: E[]): S => given.reduce(decider.evolve, decider.initialState())
  return (given: E[]) => ({
    when: (command: C) => ({
      then: (expected: E[], message = 'decides the expected events') => {
        t.same(decider.decide(command, fold(given)), expected, message)
      },
      thenNothing: (message = 'decides nothing') => {
        t.same(decider.decide(command, fold(given)), [], message)
      },
      thenThrows: (code: string, message = `throws ${code}`) => {
        const state = fold(given)
        t.throws(() => decider.decide(command, state), { code }, message)
      },
      thenRejects: (code: string, status: number, message = `refused with ${code} (${status})`) => {
        const state = fold(given)
        const kind = KIND_OF_STATUS[status]
        if (kind === undefined) throw new Error(`no domain error answers ${status}`)
        t.throws(() => decider.decide(command, state), { name: 'DomainError', code, kind }, message)
      }
    }),
    thenState: <V>(select: (state: S) => V, expected: V, message = 'folds to the expected state') => {
      t.same(select(fold(given)), expected, message)
    }
  })
}

/**
 * An event (or command) builder: `type` with `defaults`, any field overridden, typed with
 * the aggregate's own event type, e.g. `const created = build<AgentCreated>('AgentCreated', {...})`
 * then `created({ agent_uuid: 'a2' })`.
 */
export function build<E extends { type: string; data: object }>(type: E['type'], defaults: E['data']): (over?: Partial<E['data']>) => E {
  return (over = {}) => ({ type, data: { ...defaults, ...over } }) as E
}
