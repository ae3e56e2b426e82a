import * as delivery from '../../domain/webhook-delivery/decider.ts'
import { aggregate } from '../../eventsourcing/aggregate.ts'

/** One webhook delivery and its attempts (`webhook_delivery-<delivery uuid>`). */
export const webhookDeliveries = aggregate('webhook_delivery', delivery)
