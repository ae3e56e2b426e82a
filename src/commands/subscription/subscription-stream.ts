/** The stream of an account's subscription (every event carries it whole: one event read per command). */
export const subscriptionStream = (owner: string): string => `subscription-${owner}`
