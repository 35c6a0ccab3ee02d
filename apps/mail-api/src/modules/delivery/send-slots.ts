/**
 * At most `size` SMTP hand-offs of this process at once: the pooled transport's connection count. A
 * send waits here for a free connection instead of in nodemailer's pool queue, so the relay pause
 * (relay-throttle.ts) is checked right before a message really goes on the wire: a message queued
 * behind busy connections when the relay throttles does not go out during the pause.
 */
export class SendSlots {
  private free: number;
  private readonly waiting: { priority: number; resolve: () => void }[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /**
   * Runs `task` with a connection. Waiters get one by `priority` (lower first: a BullMQ priority), then
   * in arrival order: a transactional email fetched after marketing mail takes the next free connection.
   */
  async run<T>(task: () => Promise<T>, priority = 0): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else
      await new Promise<void>((resolve) => {
        const at = this.waiting.findIndex((w) => w.priority > priority);
        this.waiting.splice(at < 0 ? this.waiting.length : at, 0, { priority, resolve });
      });
    try {
      return await task();
    } finally {
      const next = this.waiting.shift()?.resolve;
      if (next) next();
      else this.free += 1;
    }
  }
}
