package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The event a watcher's client sees for a change (the apiserver's {@code convertToWatchEvent}): ADDED, MODIFIED and
 * DELETED events are the change's shared ones, picked by whether the object passes the watcher's filter before and
 * after; a bookmark is the watcher's own, as its annotation depends on the watcher's state.
 */
final class WatchEventConverter<T extends HasMetadata> {

  private final Predicate<? super T> filter;
  private final WatchObjects<T> objects;

  /**
   * @param filter which objects the watcher sees
   * @param objects makes bookmark objects and copies of deleted ones
   */
  WatchEventConverter(Predicate<? super T> filter, WatchObjects<T> objects) {
    this.filter = filter;
    this.objects = objects;
  }

  /**
   * @param endOfInitialEvents whether a bookmark is the one the client waits for (it carries the
   *     {@link WatchEvent#INITIAL_EVENTS_END_ANNOTATION})
   * @return the event; null if the object is not in the watched set before or after
   */
  WatchEvent<T> convert(Change<T> change, boolean endOfInitialEvents) {
    if (change.isBookmark()) {
      T object = objects.empty().get();
      ObjectMeta metadata = new ObjectMeta();
      metadata.setResourceVersion(change.version());
      if (endOfInitialEvents) {
        Map<String, String> annotations = new HashMap<>();
        annotations.put(WatchEvent.INITIAL_EVENTS_END_ANNOTATION, "true");
        metadata.setAnnotations(annotations);
      }
      object.setMetadata(metadata);
      return new WatchEvent<>(WatchEvent.Type.BOOKMARK, object, change.version());
    }
    boolean currentPasses = change.type() != WatchEvent.Type.DELETED && change.current() != null
        && filter.test(change.current());
    boolean previousPasses = change.previous() != null && filter.test(change.previous());
    if (currentPasses) {
      return previousPasses ? change.modified() : change.added();
    }
    if (previousPasses) {
      return change.deleted(objects.copy());
    }
    return null;
  }
}
