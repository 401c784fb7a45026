package dev.nodelet.kube.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Told what changed in a {@link Reflector}'s objects. The reflector keeps the last state it reported, so after a
 * relist the listener gets the difference (additions, updates, deletions) and not a replay. Callbacks of one reflector
 * run one at a time on a small shared pool: they must not block. Each does nothing unless overridden: the listener of
 * a reflector read only through {@link Reflector#get} and {@link Reflector#list} overrides none.
 *
 * @param <T> the resource type
 */
@ConsumerType
public interface ReflectorListener<T extends HasMetadata> {

  /** @param object an object that appeared */
  default void onAdd(T object) {
  }

  /**
   * @param oldObject the object as reported before
   * @param newObject the object now
   */
  default void onUpdate(T oldObject, T newObject) {
  }

  /** @param object the object as last seen, which is gone */
  default void onDelete(T object) {
  }

  /**
   * The reflector's objects match the server's at {@code resourceVersion}: after the first sync and after every
   * relist. Events before this one describe the difference to the previous state.
   *
   * @param resourceVersion the resourceVersion of the sync
   */
  default void onSynced(String resourceVersion) {
  }

  /**
   * A bookmark: nothing changed up to {@code resourceVersion}.
   *
   * @param resourceVersion the resourceVersion the watch has reached
   */
  default void onBookmark(String resourceVersion) {
  }

  /**
   * The server no longer has the history after {@code resourceVersion} ({@code 410 Gone}): the reflector lists
   * again at once; the difference to the state before and {@link #onSynced} follow.
   *
   * @param resourceVersion the resourceVersion that is too old
   * @since 1.1
   */
  default void onGone(String resourceVersion) {
  }

  /**
   * The watch is open again from {@code resourceVersion} after it had ended (a server-side timeout, a cut, a
   * failure), without a list: the server answered the new watch request.
   *
   * @param resourceVersion the resourceVersion the watch resumed from
   * @since 1.1
   */
  default void onRestart(String resourceVersion) {
  }

  /**
   * A list or watch failed; the reflector retries on its own with backoff (and lists again only after 410 Gone).
   *
   * @param error what failed, naming the resource and, if the server answered, its status
   */
  default void onError(ReflectorException error) {
  }
}
