/**
 * A subscriber for tests of src/events/subscriptions.ts without a connection: the test sets its
 * unwritten backlog and closes it; subclasses record what they are delivered.
 */
import type { Notification, SubscriberSink, Subscription } from '../../src/events/subscriptions.js';

export abstract class FakeSinkBase implements SubscriberSink {
  backlog = 0;
  closed = false;
  private readonly closers: Array<() => void> = [];
  constructor(readonly id: string) {}
  abstract deliver(sub: Subscription, n: Notification, item?: unknown): 'sent';
  abstract canceled(sub: Subscription, reason: string): 'sent';
  bufferedAmount(): number {
    return this.backlog;
  }
  onClose(l: () => void) {
    this.closers.push(l);
    return () => {};
  }
  close(): void {
    this.closed = true;
    for (const l of this.closers) l();
  }
}
