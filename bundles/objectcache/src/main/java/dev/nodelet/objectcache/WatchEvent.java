package dev.nodelet.objectcache;

import dev.nodelet.records.RecordChecks;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.Map;

/**
 * One event of a {@link Watch}, with the API server's watch semantics.
 *
 * <p>{@link Type#ADDED} and {@link Type#MODIFIED} carry the object as it is now; {@link Type#DELETED} carries the
 * last state the watcher saw, with the event's resource version; {@link Type#BOOKMARK} carries an empty object whose
 * {@code metadata.resourceVersion} tells how far the watch has come. The bookmark that ends the initial events of a
 * watch with {@link WatchOptions#sendInitialEvents()} carries the annotation {@value #INITIAL_EVENTS_END_ANNOTATION}
 * {@code = "true"}.
 *
 * <p>The object is shared with the cache and other watchers: callers must not modify it. {@link #toString()} names
 * the object only (kind, namespace, name), never its content, so that Secret data does not reach a log line.
 *
 * @param type the kind of event
 * @param object the object; never {@code null}
 * @param resourceVersion the resource version of the event in the cache that serves the watch
 * @param <T> the Kubernetes type of the objects
 */
public record WatchEvent<T extends HasMetadata>(Type type, T object, String resourceVersion) {

  /** The annotation of the bookmark that ends the initial events, as the API server sets it. */
  public static final String INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end";

  /** The kinds of watch event. */
  public enum Type {
    /** The object entered the watched set (it was created, or now passes the watch's filter). */
    ADDED,
    /** The object changed and passes the filter before and after. */
    MODIFIED,
    /** The object left the watched set (it was deleted, or no longer passes the filter). */
    DELETED,
    /** Progress only: the watch has seen everything up to {@link WatchEvent#resourceVersion()}. */
    BOOKMARK
  }

  /**
   * @param type the kind of event
   * @param object the object
   * @param resourceVersion the resource version of the event
   */
  public WatchEvent {
    RecordChecks.requireNonNull(WatchEvent.class, type, object, resourceVersion);
  }

  /** @return true if this is the bookmark that ends the initial events of a watch */
  public boolean isInitialEventsEnd() {
    ObjectMeta metadata = object.getMetadata();
    Map<String, String> annotations = metadata == null ? null : metadata.getAnnotations();
    return type == Type.BOOKMARK && annotations != null
        && "true".equals(annotations.get(INITIAL_EVENTS_END_ANNOTATION));
  }

  @Override
  public String toString() {
    ObjectMeta metadata = object.getMetadata();
    String name = metadata == null ? "" : metadata.getNamespace() + "/" + metadata.getName();
    return type + " " + object.getKind() + " " + name + " at " + resourceVersion;
  }
}
