package dev.nodelet.objectcache;

/** What a store does about one object right now, as far as the store tells (see {@link ObjectStore#state}). */
public enum ObjectState {
  /** Kept fresh: its watch runs. */
  RUNNING,
  /** Not kept fresh because the store was closed; nothing restarts it. */
  STOPPED,
  /** Not kept fresh because nobody read it for a while; the next get starts it again. */
  IDLE,
  /** The object can no longer change; its copy is served from memory. */
  IMMUTABLE,
  /**
   * Served from the copy a previous run stored on disk: the API server has not confirmed or replaced it yet (it is
   * unreachable, or the watch that resumes from the stored resourceVersion has not reported yet).
   *
   * @since 3.0
   */
  FROM_DISK,
  /**
   * Not watched because the store's watch budget is spent: served by GETs, fetched again once the copy is older
   * than the time-to-live; a get that finds it read again soon moves it back to a watch.
   *
   * @since 3.2
   */
  POLLED
}
