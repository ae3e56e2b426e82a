import * as wallet from '../../domain/wallet/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** An account's tokens: grants, reservations, captures (`wallet-<user uuid>`). */
export const wallets = aggregate('wallet', wallet)
