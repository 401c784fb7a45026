package dev.nodelet.objectcache;

/** A get asked for an object that no registered pod references: {@code object "ns"/"name" not registered}. */
public class NotRegisteredException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * @param namespace the object's namespace
   * @param name the object's name
   */
  public NotRegisteredException(String namespace, String name) {
    super("object " + Quote.of(namespace) + "/" + Quote.of(name) + " not registered");
  }
}
