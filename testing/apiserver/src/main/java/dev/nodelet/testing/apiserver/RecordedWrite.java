package dev.nodelet.testing.apiserver;

/**
 * One write request as the server received it.
 *
 * @param verb the write verb
 * @param resource the resource plural, e.g. {@code resourceslices}
 * @param namespace the namespace, or {@code null} for cluster-scoped resources
 * @param name the object's name; for a create with {@code generateName}, the generated name; {@code null} for a
 *     delete-collection
 * @param nodeName {@code spec.nodeName} of the object written (for a delete, of the object deleted), or {@code null}
 * @param status the HTTP status the server answered
 */
public record RecordedWrite(Verb verb, String resource, String namespace, String name, String nodeName, int status) {

  /** True when the server accepted the write. */
  public boolean succeeded() {
    return status >= 200 && status < 300;
  }
}
