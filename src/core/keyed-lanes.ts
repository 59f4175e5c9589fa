// Work that must not overlap per key, in this process: each task for a key starts once the one
// before it for that key has ended (failed or not); tasks of other keys run beside it.

/** Lanes of tasks, one lane per key; a lane is forgotten once it is empty. */
export class KeyedLanes {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task of `key` has ended; answers what it answers. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
