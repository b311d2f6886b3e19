/**
 * A one-slot channel from a push source (a kafkajs eachBatch callback) to a pull consumer
 * (an async iterator): put() resolves once take() has the item, so the source runs at most
 * one item ahead. close() ends it: pending and later take()s get null (or the error), and
 * pending put()s resolve.
 */
import type { RunlogError } from '../../errors.ts';

export class Handoff<T> {
  #item: { value: T; taken: () => void } | null = null;
  #taker: ((value: T | null) => void) | null = null;
  #takerFailed: ((error: RunlogError) => void) | null = null;
  #closed = false;
  #error: RunlogError | null = null;

  /** Resolves once the item is taken or the handoff closes; calls keepAlive every keepAliveMs meanwhile. */
  async put(value: T, keepAlive: () => Promise<void>, keepAliveMs: number): Promise<void> {
    if (this.#closed) return;
    const taken = new Promise<void>((resolve) => {
      this.#item = { value, taken: resolve };
    });
    this.#deliver();
    const timer = setInterval(() => void keepAlive().catch(() => undefined), keepAliveMs);
    try {
      await taken;
    } finally {
      clearInterval(timer);
    }
  }

  take(): Promise<T | null> {
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#taker = resolve;
      this.#takerFailed = reject;
      this.#deliver();
      if (this.#closed) this.#finish();
    });
  }

  close(error?: RunlogError): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error ?? null;
    this.#finish();
  }

  #deliver(): void {
    const item = this.#item;
    const taker = this.#taker;
    if (!item || !taker) return;
    this.#item = null;
    this.#taker = null;
    this.#takerFailed = null;
    taker(item.value);
    item.taken();
  }

  /** After close: releases a waiting put and a waiting take. */
  #finish(): void {
    const item = this.#item;
    this.#item = null;
    item?.taken();
    const [taker, failed] = [this.#taker, this.#takerFailed];
    this.#taker = null;
    this.#takerFailed = null;
    if (this.#error) failed?.(this.#error);
    else taker?.(null);
  }
}
