/**
 * At most `size` SMTP hand-offs of this process at once: the pooled transport's connection count. A
 * send waits here for a free connection instead of in nodemailer's pool queue, so the relay pause
 * (relay-throttle.ts) is checked right before a message really goes on the wire: a message queued
 * behind busy connections when the relay throttles does not go out during the pause.
 */
export class SendSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
