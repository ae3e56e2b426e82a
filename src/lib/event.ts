/** An event as produced by a decider: type and snake_case data (metadata is added on append). */
export interface Event<T extends string, D> {
  type: T
  data: D
}
