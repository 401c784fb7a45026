package dev.nodelet.objectcache.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * A change of the cache as the dispatcher hands it to every watcher (the apiserver's {@code watchCacheEvent}): the
 * object before and after, so that each watcher can derive its own event type from its filter.
 *
 * @param type what happened in the cache: ADDED, MODIFIED, DELETED or BOOKMARK
 * @param previous the object before the change; {@code null} if it was not in the cache, and for bookmarks
 * @param current the object after the change; {@code null} for deletions and bookmarks
 * @param revision the cache revision of the change
 */
record Change<T extends HasMetadata>(WatchEvent.Type type, T previous, T current, long revision) {

  static <T extends HasMetadata> Change<T> bookmark(long revision) {
    return new Change<>(WatchEvent.Type.BOOKMARK, null, null, revision);
  }

  boolean isBookmark() {
    return type == WatchEvent.Type.BOOKMARK;
  }
}
