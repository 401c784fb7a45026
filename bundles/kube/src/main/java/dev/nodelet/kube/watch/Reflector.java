package dev.nodelet.kube.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Keeps the objects of one resource type that match its namespace and selectors in step with the API server, and
 * tells its {@link ReflectorListener} about every change. Callbacks of one reflector never run concurrently and
 * arrive in the server's order. {@link #close()} ends its watch at once, also one whose request is still in flight.
 *
 * @param <T> the resource type
 */
@ProviderType
public interface Reflector<T extends HasMetadata> extends AutoCloseable {

  /** @return true once the reflector's objects matched the server's at some resourceVersion, until it is closed */
  boolean isSynced();

  /** @return the resourceVersion the reflector has seen last, empty before the first sync */
  Optional<String> resourceVersion();

  /** @return the objects as last seen, in no particular order */
  List<T> list();

  /**
   * @param namespace the object's namespace, {@code null} for cluster-scoped objects
   * @param name the object's name
   * @return the object as last seen
   */
  Optional<T> get(String namespace, String name);

  /** Ends the watch or list in flight and every retry; no callback starts after this returns. Idempotent. */
  @Override
  void close();

  /**
   * What to reflect. {@link #start()} validates the options and starts in the background; it never blocks on I/O.
   *
   * @param <T> the resource type
   */
  @ProviderType
  interface Builder<T extends HasMetadata> {

    /**
     * @param namespace only this namespace (ignored for cluster-scoped types)
     * @return this builder
     */
    Builder<T> namespace(String namespace);

    /**
     * @param fieldSelector a field selector such as {@code metadata.name=node-a} or {@code spec.nodeName=node-a}
     * @return this builder
     */
    Builder<T> fieldSelector(String fieldSelector);

    /**
     * @param labelSelector a label selector such as {@code app=web,tier!=db}
     * @return this builder
     */
    Builder<T> labelSelector(String labelSelector);

    /**
     * Starts from a state the caller kept (on disk, say) instead of listing: the first request is a watch from
     * {@code resourceVersion}, and the reflector lists only if the server answers {@code 410 Gone}
     * ({@link ReflectorListener#onGone}). The objects are the reflector's state at that version: the listener is not
     * told about them, later changes are reported against them, and a relist reports the difference to them.
     * {@link Reflector#isSynced()} turns true with the first event or bookmark of the watch; no
     * {@link ReflectorListener#onSynced} comes unless the reflector lists.
     *
     * @param resourceVersion the resourceVersion the objects were seen at; required
     * @param objects the objects as seen at that version, those matching the namespace and selectors only
     * @return this builder
     * @since 1.1
     */
    Builder<T> resumeFrom(String resourceVersion, Collection<? extends T> objects);

    /**
     * @param listener who is told about changes; required
     * @return this builder
     */
    Builder<T> listener(ReflectorListener<T> listener);

    /**
     * @return the started reflector; close it when done
     * @throws IllegalArgumentException naming the option that cannot be used
     * @throws IllegalStateException if the {@link Reflectors} are closed
     */
    Reflector<T> start();
  }
}
