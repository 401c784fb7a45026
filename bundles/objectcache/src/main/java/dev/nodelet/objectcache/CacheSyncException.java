package dev.nodelet.objectcache;

/**
 * A store could not sync an object's cache within its wait bound:
 * {@code failed to sync configmaps cache: timed out waiting for the condition}, as the kubelet says, followed by the
 * object and the reason when the store knows them.
 */
public class CacheSyncException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The reason the kubelet gives, kept so that messages match. */
  private static final String TIMED_OUT = "timed out waiting for the condition";

  /**
   * The wait bound passed.
   *
   * @param resource the plural resource name, e.g. {@code configmaps}
   */
  public CacheSyncException(String resource) {
    super(message(resource, TIMED_OUT));
  }

  /**
   * The wait bound passed for one object, for a known reason:
   * {@code failed to sync configmaps cache: timed out waiting for the condition (configmaps "ns"/"name": reason)}.
   *
   * @param resource the plural resource name, e.g. {@code configmaps}
   * @param namespace the object's namespace
   * @param name the object's name
   * @param reason why it did not sync, e.g. {@code the API server is unreachable (java.net.ConnectException)}; must
   *     not contain secret data
   * @param cause the last failure of the store's requests for the object, or {@code null}
   * @since 1.5
   */
  public CacheSyncException(String resource, String namespace, String name, String reason, Throwable cause) {
    super(message(resource, TIMED_OUT) + " (" + resource + " " + Quote.of(namespace) + "/" + Quote.of(name) + ": "
        + reason + ")", cause);
  }

  /**
   * The wait was interrupted.
   *
   * @param resource the plural resource name
   * @param cause the interruption
   */
  public CacheSyncException(String resource, InterruptedException cause) {
    super(message(resource, "interrupted"), cause);
  }

  private static String message(String resource, String reason) {
    return "failed to sync " + resource + " cache: " + reason;
  }
}
