package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * A change of the cache as the dispatcher hands it to every watcher (the apiserver's {@code watchCacheEvent}): the
 * object before and after, so that each watcher can derive its own event type from its filter.
 *
 * <p>A change is offered to every watcher, so what does not depend on the watcher is made once here and shared: the
 * revision as a string and the ADDED, MODIFIED and DELETED events (immutable; the objects are shared with the cache
 * anyway). They are made on first use in whichever thread converts the change; a race makes an equal event twice,
 * which is harmless because {@link WatchEvent} is immutable and safely published through its final fields.
 */
final class Change<T extends HasMetadata> {

  private final WatchEvent.Type type;
  private final T previous;
  private final T current;
  private final long revision;
  private final String version;
  // racy single-check caches, see the class comment
  private WatchEvent<T> added;
  private WatchEvent<T> modified;
  private WatchEvent<T> deleted;

  /**
   * @param type what happened in the cache: ADDED, MODIFIED, DELETED or BOOKMARK
   * @param previous the object before the change; {@code null} if it was not in the cache, and for bookmarks
   * @param current the object after the change; {@code null} for deletions and bookmarks
   * @param revision the cache revision of the change
   */
  Change(WatchEvent.Type type, T previous, T current, long revision) {
    this.type = Objects.requireNonNull(type, "type");
    this.previous = previous;
    this.current = current;
    this.revision = revision;
    this.version = Long.toString(revision);
  }

  static <T extends HasMetadata> Change<T> bookmark(long revision) {
    return new Change<>(WatchEvent.Type.BOOKMARK, null, null, revision);
  }

  WatchEvent.Type type() {
    return type;
  }

  T previous() {
    return previous;
  }

  T current() {
    return current;
  }

  long revision() {
    return revision;
  }

  /** @return the revision as the events' resource version */
  String version() {
    return version;
  }

  boolean isBookmark() {
    return type == WatchEvent.Type.BOOKMARK;
  }

  /** @return the ADDED event of the current object, shared by every watcher that sees it enter its set */
  WatchEvent<T> added() {
    WatchEvent<T> event = added;
    if (event == null) {
      event = new WatchEvent<>(WatchEvent.Type.ADDED, current, version);
      added = event;
    }
    return event;
  }

  /** @return the MODIFIED event of the current object, shared by every watcher that sees it change */
  WatchEvent<T> modified() {
    WatchEvent<T> event = modified;
    if (event == null) {
      event = new WatchEvent<>(WatchEvent.Type.MODIFIED, current, version);
      modified = event;
    }
    return event;
  }

  /**
   * @param copy makes a copy of the previous object whose metadata can be changed
   * @return the DELETED event: a copy of the previous object with this change's resource version, shared by every
   *     watcher that sees the object leave its set (the cached object itself keeps its own resource version)
   */
  WatchEvent<T> deleted(UnaryOperator<T> copy) {
    WatchEvent<T> event = deleted;
    if (event == null) {
      T object = copy.apply(previous);
      object.getMetadata().setResourceVersion(version);
      event = new WatchEvent<>(WatchEvent.Type.DELETED, object, version);
      deleted = event;
    }
    return event;
  }

  @Override
  public String toString() {
    return type + "@" + revision;
  }
}
