/**
 * The scheduling the write batchers share (/v1/track, delivery's claims and outcomes, engagement
 * events): calls queue up and, after the current I/O phase (so calls that arrived together share a
 * batch), go out in batches of at most `maxBatch`, at most `maxInFlight` batches at once; the end of
 * a batch lets the next one go. A lone call goes out at once, alone. What a batch does, and how its
 * calls are answered, is the batcher's `write`, which must not reject.
 */
export class CallCoalescer<Call> {
  private queue: Call[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly write: (batch: Call[]) => Promise<void>,
    private readonly limits: { maxInFlight: number; maxBatch: number },
  ) {}

  push(call: Call): void {
    this.queue.push(call);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.limits.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
        const batch = this.queue.splice(0, this.limits.maxBatch);
        this.inFlight += 1;
        void this.write(batch).finally(() => {
          this.inFlight -= 1;
          this.schedule();
        });
      }
    });
  }
}
