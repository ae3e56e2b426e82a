import type { Flow } from '../eventsourcing/flow.ts'
import type { CommandContext } from '../commands/context.ts'
import { confirmAccountFlow } from './confirm-account/flow.ts'
import { revokeSessionsFlow } from './revoke-sessions/flow.ts'
import { deleteAccountFlow } from './delete-account/flow.ts'
import { planGrantFlow } from './plan-change/flow.ts'
import { emailChangeFlow } from './email-change/flow.ts'

/**
 * Every flow (docs/architecture.md "Flows"): the flow worker runs each from its trigger
 * events, at least once. A flow's own entry point (the HTTP route's operation) runs it
 * inline too.
 */
// biome-ignore lint/suspicious/noExplicitAny: each flow has its own state and command types; the worker treats them alike.
export const FLOWS: ReadonlyArray<Flow<CommandContext, any, any>> = [confirmAccountFlow, revokeSessionsFlow, deleteAccountFlow, planGrantFlow, emailChangeFlow]

/** The event types that start a flow (the flow worker's NATS stream and durable consumer). */
export const FLOW_EVENTS: readonly string[] = [...new Set(FLOWS.flatMap(f => f.triggers))]
