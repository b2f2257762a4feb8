/** Microseconds on the monotonic clock that deadlines, queue times and request durations use. */
export const nowUs = (): number => performance.now() * 1000;
