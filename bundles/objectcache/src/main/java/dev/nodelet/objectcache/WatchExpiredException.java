package dev.nodelet.objectcache;

/**
 * A watch asked to start at a resource version older than the cache still remembers (the API server answers
 * {@code 410 Gone}): start again without a resource version, or with {@link WatchOptions#sendInitialEvents()}.
 */
public class WatchExpiredException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String resource;
  private final String resourceVersion;

  /**
   * @param resource the plural resource name, e.g. {@code configmaps}
   * @param resourceVersion the requested resource version
   * @param oldest the oldest resource version the cache can still start a watch at
   */
  public WatchExpiredException(String resource, String resourceVersion, String oldest) {
    super("too old resource version: " + resourceVersion + " (" + oldest + ") for " + resource);
    this.resource = resource;
    this.resourceVersion = resourceVersion;
  }

  /** @return the plural resource name */
  public String resource() {
    return resource;
  }

  /** @return the requested resource version */
  public String resourceVersion() {
    return resourceVersion;
  }
}
