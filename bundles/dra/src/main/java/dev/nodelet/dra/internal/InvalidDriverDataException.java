package dev.nodelet.dra.internal;

/** A driver name or snapshot that the {@code resource.k8s.io/v1} API would reject; the message says why. */
final class InvalidDriverDataException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  InvalidDriverDataException(String message) {
    super(message);
  }
}
