package dev.nodelet.objectcache;

/**
 * A store could not sync an object's cache within its wait bound:
 * {@code failed to sync configmaps cache: timed out waiting for the condition}.
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
