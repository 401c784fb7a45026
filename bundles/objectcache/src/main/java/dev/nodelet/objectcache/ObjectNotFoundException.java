package dev.nodelet.objectcache;

/** The API server holds no such object: {@code configmaps "name" not found}, as the API server words it. */
public class ObjectNotFoundException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String resource;
  private final String namespace;
  private final String name;

  /**
   * @param resource the plural resource name, e.g. {@code configmaps}
   * @param namespace the object's namespace
   * @param name the object's name
   */
  public ObjectNotFoundException(String resource, String namespace, String name) {
    super(resource + " " + Quote.of(name) + " not found");
    this.resource = resource;
    this.namespace = namespace;
    this.name = name;
  }

  /** @return the plural resource name */
  public String resource() {
    return resource;
  }

  /** @return the object's namespace */
  public String namespace() {
    return namespace;
  }

  /** @return the object's name */
  public String name() {
    return name;
  }
}
